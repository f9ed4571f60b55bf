// The banner `npm start` prints once the product is ready: where everything is, and first-run credentials.
import type { Config } from '../lib/shared/config.ts';

/** What the banner names: the bases, how long start-up took, the database and the processes with their pids. */
export interface BannerFacts {
  config: Pick<Config, 'shortBaseUrl' | 'appBaseUrl'>;
  startedAt: number;
  temporalUiUrl: string | undefined;
  databaseLabel: string;
  processes: (string | false | undefined)[];
  /** First-run credentials: the file's path always, the credentials themselves on a terminal only. */
  credentialsNotice: string;
}

/** The lines `npm start` prints once everything is ready. */
export function printBanner(facts: BannerFacts): void {
  const { config, startedAt, temporalUiUrl, databaseLabel, credentialsNotice } = facts;
  const lines = [
    '',
    `Lifeline is running (started in ${((Date.now() - startedAt) / 1000).toFixed(1)} s).`,
    `  Short links:  ${config.shortBaseUrl}/<code>`,
    `  Editor UI:    ${config.appBaseUrl}/ui`,
    `  API:          ${config.appBaseUrl}/api/v1`,
    `  Temporal UI:  ${temporalUiUrl ?? '(external Temporal; see TEMPORAL_UI_URL)'}`,
    `  Database:     ${databaseLabel}`,
    `  Processes:    ${facts.processes.filter(Boolean).join(', ')}`,
  ];
  // First-run credentials: the file's path always, the credentials themselves on a terminal only.
  if (credentialsNotice) lines.push(credentialsNotice.trimEnd());
  lines.push('', 'Press Ctrl-C to stop.', '');
  process.stderr.write(`${lines.join('\n')}\n`);
}
