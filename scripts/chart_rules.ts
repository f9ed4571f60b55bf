// Copies the alert and recording rules (ops/prometheus/lifeline.rules.yml, the one source, checked by promtool)
// into the Helm chart, whose PrometheusRule includes them with .Files.Get: Helm reads only files inside a chart.
// Run it after changing the rules and commit the copy; `--check` only compares
// (tests/deploy/helm_chart.test.ts fails while the copy differs).
//
//   npm run chart:rules [-- --check]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './temporal_cli.ts';

export const RULES_SOURCE = join(ROOT, 'ops', 'prometheus', 'lifeline.rules.yml');
export const RULES_IN_CHART = join(ROOT, 'deploy', 'helm', 'lifeline', 'files', 'lifeline.rules.yml');

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const source = readFileSync(RULES_SOURCE, 'utf8');
  if (process.argv.includes('--check')) {
    let copy: string | undefined;
    try {
      copy = readFileSync(RULES_IN_CHART, 'utf8');
    } catch {}
    if (copy !== source) {
      console.error(`${RULES_IN_CHART} differs from ${RULES_SOURCE}: run npm run chart:rules and commit it.`);
      process.exit(1);
    }
    console.error('chart:rules: the chart holds the current rules.');
  } else {
    writeFileSync(RULES_IN_CHART, source);
    console.error(`chart:rules: ${RULES_SOURCE} → ${RULES_IN_CHART}`);
  }
}
