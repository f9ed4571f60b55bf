// Dead destinations: keeping an archived copy of each destination (the Internet Archive) and acting on a death.
import { z } from 'zod';
import { flag, isHttpsOrLoopback, optionalHttpUrl, optionalString } from './env_values.ts';

export const ARCHIVE_MODES = ['off', 'lookup', 'save'] as const;
export type ArchiveMode = (typeof ARCHIVE_MODES)[number];

export const archiveEnv = z.object({
  // off: no request to the Internet Archive; lookup: the closest existing snapshot (availability API);
  // save: Save Page Now on create and retarget, the lookup when a save fails.
  ARCHIVE_MODE: z.enum(ARCHIVE_MODES, { message: 'must be off, lookup or save' }).default('off'),
  ARCHIVE_ACCESS_KEY: optionalString,
  ARCHIVE_SECRET_KEY: optionalString,
  ARCHIVE_SAVE_BASE_URL: optionalHttpUrl.transform((v) => v ?? 'https://web.archive.org'),
  ARCHIVE_AVAILABILITY_BASE_URL: optionalHttpUrl.transform((v) => v ?? 'https://archive.org'),
  // Captures and lookups per minute the queue of bulk-made links asks of the Archive (ADR 0076): Save Page Now
  // limits sessions per account and answers 429 beyond them; the drainer keeps well under it.
  ARCHIVE_RATE: z.coerce
    .number({ message: 'must be a number of requests per minute (e.g. 6)' })
    .positive('must be a number of requests per minute above 0 (e.g. 6)')
    .max(600, 'must be at most 600 requests per minute')
    .default(6),
  // A `moved` destination on one of our own hosts is retargeted without an editor's click.
  DEAD_MOVED_AUTO_RETARGET: flag.default(false),
});

export function refineArchiveEnv(env: z.infer<typeof archiveEnv>, ctx: z.RefinementCtx): void {
  if (env.ARCHIVE_MODE === 'save' && (!env.ARCHIVE_ACCESS_KEY || !env.ARCHIVE_SECRET_KEY)) {
    ctx.addIssue({
      code: 'custom',
      path: [env.ARCHIVE_ACCESS_KEY ? 'ARCHIVE_SECRET_KEY' : 'ARCHIVE_ACCESS_KEY'],
      message:
        'ARCHIVE_MODE=save needs ARCHIVE_ACCESS_KEY and ARCHIVE_SECRET_KEY (archive.org/account/s3.php)',
    });
  }
  for (const name of ['ARCHIVE_SAVE_BASE_URL', 'ARCHIVE_AVAILABILITY_BASE_URL'] as const) {
    if (!isHttpsOrLoopback(env[name])) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: 'must be https (or http to a loopback address)',
      });
    }
  }
}

export interface ArchiveConfig {
  /** What Lifeline asks of the Internet Archive (ARCHIVE_MODE), with the Save Page Now keys when saving. */
  archive: {
    mode: ArchiveMode;
    keys: { accessKey: string; secretKey: string } | undefined;
    saveBaseUrl: string;
    availabilityBaseUrl: string;
    /** ARCHIVE_RATE: requests per minute from the queue's drainer. */
    ratePerMinute: number;
  };
  /** Acting on dead destinations: whether a `moved` destination on our own host is retargeted at once. */
  deadDestinations: { autoRetargetMoved: boolean };
}

export function archiveConfig(e: z.infer<typeof archiveEnv>): ArchiveConfig {
  return {
    archive: {
      mode: e.ARCHIVE_MODE,
      keys:
        e.ARCHIVE_ACCESS_KEY && e.ARCHIVE_SECRET_KEY
          ? { accessKey: e.ARCHIVE_ACCESS_KEY, secretKey: e.ARCHIVE_SECRET_KEY }
          : undefined,
      saveBaseUrl: e.ARCHIVE_SAVE_BASE_URL,
      availabilityBaseUrl: e.ARCHIVE_AVAILABILITY_BASE_URL,
      ratePerMinute: e.ARCHIVE_RATE,
    },
    deadDestinations: { autoRetargetMoved: e.DEAD_MOVED_AUTO_RETARGET },
  };
}
