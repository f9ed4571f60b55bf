import type { ArchiveMode } from '../shared/config/archive.ts';
import type { Logger } from '../shared/logger.ts';
import type { Sql } from '../stores/sql.ts';
import type { InternetArchive } from './internet_archive.ts';

/** lifeline_archive_saves_total's outcomes: what became of one request to the Internet Archive. */
export type ArchiveSaveOutcome =
  | 'saved'
  | 'found'
  | 'missing'
  | 'failed'
  | 'rate_limited'
  | 'refused'
  | 'unavailable';

/** What keeping an archived copy needs: the pool, the Archive's client (absent when ARCHIVE_MODE=off). */
export interface ArchiveDeps {
  sql: Sql;
  logger: Logger;
  archive: {
    mode: ArchiveMode;
    /** Absent when ARCHIVE_MODE=off. */
    internetArchive: InternetArchive | undefined;
    /** True for the newsroom's own hosts (never sent to the Archive). */
    isOwnHost(host: string): boolean;
    /** ARCHIVE_RATE: captures and lookups the queue's drainer asks of the Archive per minute. */
    ratePerMinute: number;
    /** Counts one outcome (lifeline_archive_saves_total). */
    count(outcome: ArchiveSaveOutcome): void;
  };
}
