// Links that outlive us: escrow exports (signed, kept, restorable) and the static last-resort snapshots.
import { z } from 'zod';
import type { IssueSink } from '../temporal_settings.ts';
import { absolutePath, duration, optionalString } from './env_values.ts';

/** Formats of the static last-resort snapshot (`npm run snapshot -- --format …`, SNAPSHOT_FORMATS). */
export const SNAPSHOT_FORMATS = ['nginx', 'redirects', 'json'] as const;
export type SnapshotFormat = (typeof SNAPSHOT_FORMATS)[number];

export const escrowEnv = z.object({
  ESCROW_INTERVAL: optionalString.pipe(duration.optional()),
  ESCROW_DIR: optionalString.pipe(absolutePath.optional()),
  ESCROW_KEEP: z.coerce.number().int().min(1).max(1_000).default(7),
  // Signs each export's manifest (HMAC-SHA256) and makes a restore refuse one that is unsigned or tampered.
  ESCROW_SIGNING_KEY: optionalString.pipe(
    z
      .string()
      .min(32, 'must be at least 32 characters (e.g. `openssl rand -base64 48`)')
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
      .optional(),
  ),
  SNAPSHOT_INTERVAL: optionalString.pipe(duration.optional()),
  SNAPSHOT_DIR: optionalString.pipe(absolutePath.optional()),
  SNAPSHOT_FORMATS: z
    .string()
    .optional()
    .transform((v) => [...new Set((v ?? SNAPSHOT_FORMATS.join(',')).split(',').map((s) => s.trim()))])
    .refine(
      (formats) =>
        formats.length > 0 && formats.every((f) => (SNAPSHOT_FORMATS as readonly string[]).includes(f)),
      { message: `must be a comma list of ${SNAPSHOT_FORMATS.join(', ')}` },
    )
    .transform((formats) => formats as SnapshotFormat[]),
  SNAPSHOT_KEEP: z.coerce.number().int().min(1).max(100).default(3),
});

type EscrowEnv = z.infer<typeof escrowEnv>;

export function refineEscrowEnv(env: EscrowEnv, ctx: IssueSink): void {
  if (env.ESCROW_INTERVAL && !env.ESCROW_DIR) {
    ctx.addIssue({
      code: 'custom',
      path: ['ESCROW_DIR'],
      message: 'is required when ESCROW_INTERVAL is set',
    });
  }
  if (env.SNAPSHOT_INTERVAL && !env.SNAPSHOT_DIR) {
    ctx.addIssue({
      code: 'custom',
      path: ['SNAPSHOT_DIR'],
      message: 'is required when SNAPSHOT_INTERVAL is set',
    });
  }
}

export interface EscrowConfig {
  /**
   * Escrow exports (lib/escrow): the Schedule's interval (undefined: off), the directory it writes
   * `lifeline-escrow-<time>/` folders to (also where the ops page finds the latest), and how many it keeps.
   */
  escrow: {
    interval: string | undefined;
    dir: string | undefined;
    keep: number;
    /** ESCROW_SIGNING_KEY: signs each export's manifest; a restore with it set refuses unsigned or tampered ones. */
    signingKey: string | undefined;
  };
  /** Static last-resort snapshots (lib/snapshot): interval (undefined: off), directory, formats, how many kept. */
  snapshot: {
    interval: string | undefined;
    dir: string | undefined;
    formats: SnapshotFormat[];
    keep: number;
  };
}

export function escrowConfig(e: EscrowEnv): EscrowConfig {
  return {
    escrow: {
      interval: e.ESCROW_INTERVAL,
      dir: e.ESCROW_DIR,
      keep: e.ESCROW_KEEP,
      signingKey: e.ESCROW_SIGNING_KEY,
    },
    snapshot: {
      interval: e.SNAPSHOT_INTERVAL,
      dir: e.SNAPSHOT_DIR,
      formats: e.SNAPSHOT_FORMATS,
      keep: e.SNAPSHOT_KEEP,
    },
  };
}
