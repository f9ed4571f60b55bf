// Links: the codes minted, the hosts targets may name, bulk changes' sync batches, the expiry sweeper's batches
// and who approves a retarget.
import { z } from 'zod';
import { commaList, flag } from './env_values.ts';

/** Codes and aliases: letters, digits, '-' and '_' (Bitly's back-half rules), case-sensitive. */
export const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export const linksEnv = z.object({
  CODE_LENGTH: z.coerce.number().int().min(5).max(12).default(6),
  ALLOWED_TARGET_HOSTS: commaList,
  SYNC_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(200),
  EXPIRY_BATCH_SIZE: z.coerce.number().int().min(1).max(5000).default(500),
  RETARGET_REQUIRES_SECOND_ADMIN: flag.default(false),
});

export interface LinksConfig {
  codeLength: number;
  allowedTargetHosts: string[];
  /** The sync queue of bulk changes (ADR 0024): codes per batch the drainer syncs at once (SYNC_BATCH_SIZE). */
  syncQueue: { batchSize: number };
  /** The expiry sweeper (ADR 0091): due links it expires per transaction (EXPIRY_BATCH_SIZE). */
  expiry: { batchSize: number };
  /** Mass retargets: with `requiresSecondAdmin`, the one who asked for a run may not approve it. */
  retarget: { requiresSecondAdmin: boolean };
}

export function linksConfig(e: z.infer<typeof linksEnv>): LinksConfig {
  return {
    codeLength: e.CODE_LENGTH,
    allowedTargetHosts: e.ALLOWED_TARGET_HOSTS,
    syncQueue: { batchSize: e.SYNC_BATCH_SIZE },
    expiry: { batchSize: e.EXPIRY_BATCH_SIZE },
    retarget: { requiresSecondAdmin: e.RETARGET_REQUIRES_SECOND_ADMIN },
  };
}
