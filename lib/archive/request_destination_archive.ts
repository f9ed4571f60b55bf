import type { ArchiveMode } from '../shared/config/archive.ts';
import type { Logger } from '../shared/logger.ts';
import type { ArchiveStarter } from '../temporal/archive_starter.ts';

/**
 * Hands a link whose destination is new (created, or retargeted) to its archived-copy workflow, after the
 * change committed. Best effort, like the sync after a change: the link is made and answers whatever the
 * Archive does; a start Temporal could not take is logged (a later retarget, or the checks' next pass through
 * the destination, asks again). Nothing is started with ARCHIVE_MODE=off.
 */
export async function requestDestinationArchive(
  deps: { archive?: ArchiveStarter | undefined; logger: Logger; config: { archive: { mode: ArchiveMode } } },
  code: string,
): Promise<void> {
  if (deps.config.archive.mode === 'off' || !deps.archive) return;
  try {
    await deps.archive.archiveDestination(code);
  } catch (err) {
    deps.logger.warn({ err, code }, 'the archived copy of a new destination could not be asked for');
  }
}
