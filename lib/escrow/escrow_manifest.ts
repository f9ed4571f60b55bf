import { z } from 'zod';
import { ESCROW_TABLE_NAMES } from '../stores/escrow_store.ts';

/** What an escrow export is: a folder of JSON-lines files, one per table, and this manifest (docs/ESCROW.md). */
export const ESCROW_FORMAT = 'lifeline-escrow';
export const ESCROW_FORMAT_VERSION = 1;
/** Written last: a folder without it is an export that did not finish. */
export const MANIFEST_FILE = 'manifest.json';
/** The same checksums in `sha256sum -c` form, so anyone can verify an export without our code. */
export const CHECKSUMS_FILE = 'SHA256SUMS';

/** A problem with an export or a restore that the operator must fix (the CLIs print it as it is). */
export class EscrowError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EscrowError';
  }
}

export const escrowFileSchema = z.object({
  name: z.string().regex(/^[a-z_]+\.jsonl$/, 'must be a plain .jsonl file name'),
  table: z.enum(ESCROW_TABLE_NAMES),
  rows: z.number().int().min(0),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256'),
  columns: z.array(z.string().regex(/^[a-z_][a-z0-9_]*$/)).min(1),
});
export type EscrowFile = z.infer<typeof escrowFileSchema>;

export const escrowManifestSchema = z.object({
  format: z.literal(ESCROW_FORMAT),
  formatVersion: z.literal(ESCROW_FORMAT_VERSION),
  /** The moment of the one snapshot every file was read from. */
  snapshotAt: z.string(),
  finishedAt: z.string(),
  durationMs: z.number(),
  /** The newest migration of the exported database: a restore needs a database at least this new. */
  schema: z.object({
    lastMigration: z.string(),
    /**
     * The digest of the exported database's search folding: where the restoring database's is the same, the
     * exported `search_text` is loaded as it is (checked on a sample) instead of folded again row by row.
     */
    searchFold: z
      .string()
      .regex(/^[0-9a-f]{32}$/)
      .optional(),
  }),
  source: z.object({ shortBaseUrl: z.string().optional() }),
  /** Whether audit entries and click aggregates are included. */
  history: z.boolean(),
  counts: z.object({
    links: z.number().int().min(0),
    deletedLinks: z.number().int().min(0),
    linksByStatus: z.record(z.string(), z.number().int().min(0)),
  }),
  files: z.array(escrowFileSchema).min(1),
});
export type EscrowManifest = z.infer<typeof escrowManifestSchema>;
