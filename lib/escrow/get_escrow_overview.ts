import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { type EscrowRunRow, listEscrowRuns } from '../stores/escrow_run_store.ts';
import type { Db } from '../stores/sql.ts';
import { openLatestExportArchive } from './export_archive.ts';

/** An escrow run as the operations page shows it. */
export type EscrowRun = EscrowRunRow;

/** What the operations page shows about escrow exports and static snapshots. */
export interface EscrowOverview {
  export: {
    interval: string | undefined;
    dir: string | undefined;
    keep: number;
    lastRun: EscrowRun | null;
    /** The newest finished export this web process can read (what the download sends), or null. */
    latest: { folder: string; snapshotAt: string; links: number; bytes: number } | null;
    /** Why there is nothing to download, when there is not. */
    unavailable?: string;
  };
  snapshot: {
    interval: string | undefined;
    dir: string | undefined;
    formats: string[];
    lastRun: EscrowRun | null;
  };
}

/** Runs from escrow_runs, and the latest export from ESCROW_DIR as this process sees it. */
export async function getEscrowOverview(deps: {
  sql: Db;
  config: Pick<Config, 'escrow' | 'snapshot'>;
  logger?: Logger;
}): Promise<EscrowOverview> {
  const [exports, snapshots] = await Promise.all([
    listEscrowRuns(deps.sql, 'export', 1),
    listEscrowRuns(deps.sql, 'snapshot', 1),
  ]);
  const { escrow, snapshot } = deps.config;
  let latest: EscrowOverview['export']['latest'] = null;
  let unavailable: string | undefined;
  if (!escrow.dir) unavailable = 'ESCROW_DIR is not set on the web tier';
  else {
    try {
      const archive = await openLatestExportArchive(escrow.dir);
      if (archive) {
        latest = {
          folder: archive.folder,
          snapshotAt: archive.manifest.snapshotAt,
          links: archive.manifest.counts.links,
          bytes: archive.size,
        };
      } else unavailable = `no finished export in ${escrow.dir} yet`;
    } catch (error) {
      deps.logger?.warn({ err: error, dir: escrow.dir }, 'cannot read the escrow directory');
      unavailable = `cannot read ${escrow.dir} from the web tier`;
    }
  }
  return {
    export: {
      interval: escrow.interval,
      dir: escrow.dir,
      keep: escrow.keep,
      lastRun: exports[0] ?? null,
      latest,
      ...(unavailable ? { unavailable } : {}),
    },
    snapshot: {
      interval: snapshot.interval,
      dir: snapshot.dir,
      formats: [...snapshot.formats],
      lastRun: snapshots[0] ?? null,
    },
  };
}
