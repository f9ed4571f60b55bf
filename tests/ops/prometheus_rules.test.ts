// The alert rules and the example Prometheus configuration, checked by Prometheus's own tool: `promtool check
// rules` (syntax, PromQL), `promtool test rules` (ops/prometheus/lifeline.rules.test.yml: each alert fires on the
// input that should fire it, stays quiet on a near miss, and renders its annotations), `promtool check config`.
// Also: every alert's runbook section exists, and the Grafana dashboard is well-formed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createProcessMetrics } from '../../lib/shared/metrics.ts';
import { headingAnchors } from '../../scripts/check_docs.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import {
  dashboardMetricNames,
  METRICS_EXPORTED_ELSEWHERE,
  metricNamesIn,
  readDashboard,
  recordedNames,
  TEMPORAL_METRICS_AFTER_FIRST_USE,
} from './dashboard_metrics.ts';

const PROMETHEUS_DIR = join(ROOT, 'ops', 'prometheus');
const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p));
const skip = PROMTOOL ? false : 'promtool is not installed (Debian package prometheus; .ci/run installs it)';
const scratch = mkdtempSync(join(tmpdir(), 'lifeline-promtool-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function promtool(args: string[], cwd = PROMETHEUS_DIR): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL!, args, { cwd, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The alert names in the rules file, in order. */
function alertNames(): string[] {
  const rules = readFileSync(join(PROMETHEUS_DIR, 'lifeline.rules.yml'), 'utf8');
  return [...rules.matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1]!);
}

/**
 * The runbook_url values of a rules file that do not resolve: each names a markdown file in the repository and a
 * heading anchor in it, as GitHub makes them (scripts/check_docs.ts, `headingAnchors`: fenced code skipped,
 * repeated headings numbered). Read from the file each URL names, whatever it is.
 */
function unresolvedRunbooks(rules: string, root = ROOT): string[] {
  const urls = [...rules.matchAll(/runbook_url: (\S+)/g)].map((m) => m[1]!);
  const anchors = new Map<string, Set<string>>();
  return urls.filter((url) => {
    const [path = '', anchor] = url.split('#');
    if (!anchor || !path.endsWith('.md') || !existsSync(join(root, path))) return true;
    if (!anchors.has(path)) anchors.set(path, headingAnchors(readFileSync(join(root, path), 'utf8')));
    return !anchors.get(path)!.has(anchor);
  });
}

describe('Prometheus rules and configuration', { skip }, () => {
  test('promtool check rules: syntax and PromQL of every rule', () => {
    const { status, output } = promtool(['check', 'rules', 'lifeline.rules.yml']);
    assert.equal(status, 0, output);
    assert.match(output, /SUCCESS: \d+ rules found/);
  });

  test('promtool test rules: every alert fires on its input and not on the near misses', () => {
    const { status, output } = promtool(['test', 'rules', 'lifeline.rules.test.yml']);
    assert.equal(status, 0, output);
    // Every alert in the rules file is exercised by at least one unit test.
    const tests = readFileSync(join(PROMETHEUS_DIR, 'lifeline.rules.test.yml'), 'utf8');
    const tested = new Set([...tests.matchAll(/alertname: (\S+)/g)].map((m) => m[1]));
    assert.deepEqual(
      alertNames().filter((name) => !tested.has(name)),
      [],
    );
  });

  test('promtool test rules fails when an alert does not fire as its test expects', () => {
    // The same tests against rules whose redirect-error threshold was raised: the test file must catch it.
    const broken = join(scratch, 'broken');
    mkdirSync(broken);
    const rules = readFileSync(join(PROMETHEUS_DIR, 'lifeline.rules.yml'), 'utf8');
    const raised = rules.replace(
      'lifeline:redirect_requests:rate5m > 0.01',
      'lifeline:redirect_requests:rate5m > 0.5',
    );
    assert.notEqual(raised, rules);
    writeFileSync(join(broken, 'lifeline.rules.yml'), raised);
    copyFileSync(join(PROMETHEUS_DIR, 'lifeline.rules.test.yml'), join(broken, 'lifeline.rules.test.yml'));
    const { status, output } = promtool(['test', 'rules', 'lifeline.rules.test.yml'], broken);
    assert.notEqual(status, 0);
    assert.match(output, /alertname: LifelineRedirectErrors/);
  });

  test('promtool check config: the example configuration, its rule file and its token file', () => {
    const dir = join(scratch, 'config');
    mkdirSync(join(dir, 'secrets'), { recursive: true });
    for (const file of ['prometheus.yml', 'lifeline.rules.yml'])
      copyFileSync(join(PROMETHEUS_DIR, file), join(dir, file));
    writeFileSync(join(dir, 'secrets', 'lifeline-metrics-token'), 'example-token\n');
    const { status, output } = promtool(['check', 'config', 'prometheus.yml'], dir);
    assert.equal(status, 0, output);
    assert.match(output, /SUCCESS: 1 rule files found/);
  });
});

describe('runbook and dashboard', () => {
  test('every alert links a runbook section that exists, in the file its URL names', () => {
    const rules = readFileSync(join(PROMETHEUS_DIR, 'lifeline.rules.yml'), 'utf8');
    const urls = [...rules.matchAll(/runbook_url: (\S+)/g)].map((m) => m[1]!);
    assert.equal(urls.length, alertNames().length, 'one runbook_url per alert');
    assert.deepEqual(unresolvedRunbooks(rules), []);
  });

  test('a runbook_url to a missing heading, a missing file or no anchor is found', () => {
    // Paths built at run time: the docs check (scripts/check_docs.ts) would take literal ones for dead citations.
    const runbook = `docs/RUNBOOK.${'md'}`;
    const gone = `docs/GONE.${'md'}`;
    const docs = join(scratch, 'runbook-docs');
    mkdirSync(join(docs, 'docs'), { recursive: true });
    writeFileSync(
      join(docs, runbook),
      '# Runbook\n\n```sh\n# lifelinefenced\n```\n\n### LifelineKnown\n\n## Same\n\n## Same\n',
    );
    const rules = [
      `${runbook}#lifelineknown`,
      `${runbook}#same-1`,
      `${runbook}#lifelinemissing`,
      `${runbook}#lifelinefenced`,
      `${gone}#lifelineknown`,
      runbook,
    ]
      .map((url) => `    runbook_url: ${url}`)
      .join('\n');
    assert.deepEqual(unresolvedRunbooks(rules, docs), [
      `${runbook}#lifelinemissing`,
      `${runbook}#lifelinefenced`,
      `${gone}#lifelineknown`,
      runbook,
    ]);
  });

  test('the Grafana dashboard: panels with queries, on the datasource variable, without overlapping', () => {
    const dashboard = readDashboard();
    assert.equal(dashboard.uid, 'lifeline');
    assert.deepEqual(
      dashboard.templating.list.map((v) => v.name),
      ['datasource', 'instance'],
    );
    const graphs = dashboard.panels.filter((p) => p.type !== 'row');
    assert.ok(graphs.length >= 15, `${graphs.length} panels`);
    for (const panel of graphs) {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a template
      assert.equal(panel.datasource?.uid, '${datasource}', panel.title);
      assert.ok(panel.targets && panel.targets.length > 0, panel.title);
      for (const target of panel.targets) assert.ok(target.expr.trim().length > 0, panel.title);
    }
    // No two panels share a grid cell.
    const cells = new Set<string>();
    for (const { gridPos: g, title } of dashboard.panels) {
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          assert.ok(!cells.has(`${x},${y}`), `${title} overlaps another panel at ${x},${y}`);
          cells.add(`${x},${y}`);
        }
    }
    // What the brief asks the dashboard to show, by metric.
    const queries = graphs.flatMap((p) => p.targets!.map((t) => t.expr)).join('\n');
    for (const metric of [
      'lifeline_redirects_total',
      'lifeline_redirect_duration_seconds_bucket',
      'lifeline_link_lookups_total',
      'lifeline_click_flushes_total',
      'lifeline_clicks_dropped_total',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
      'temporal_workflow_task_schedule_to_start_latency_bucket',
      'temporal_activity_execution_failed',
    ]) {
      assert.ok(queries.includes(metric), `the dashboard shows ${metric}`);
    }
  });

  test('the dashboard’s "Promises" row: domain and certificate days, prober availability, drift, sync-queue and escrow age', () => {
    const { panels } = readDashboard();
    const row = panels.findIndex((p) => p.type === 'row' && p.title === 'Promises');
    assert.ok(row >= 0, 'a row titled Promises');
    const next = panels.findIndex((p, i) => i > row && p.type === 'row');
    const below = panels.slice(row + 1, next < 0 ? undefined : next);
    const shown = new Set(below.flatMap((p) => (p.targets ?? []).flatMap((t) => metricNamesIn(t.expr))));
    for (const metric of [
      'lifeline_domain_registration_days_left',
      'lifeline_tls_certificate_days_left',
      'lifeline_probe_total',
      'lifeline_reconcile_drift',
      'lifeline_sync_queue_oldest_age_seconds',
      'lifeline_escrow_last_success_age_seconds',
    ])
      assert.ok(shown.has(metric), `the Promises row shows ${metric}`);
    // Availability is ok / all probes.
    const availability = below.find((p) => p.title === 'Prober availability')?.targets?.[0]?.expr ?? '';
    assert.match(
      availability,
      /lifeline_probe_total\{result="ok"\}.*\/\s*sum\(increase\(lifeline_probe_total\[/,
    );
  });

  test('every metric the dashboard queries is declared by our code, recorded by the rules, or listed as built elsewhere', () => {
    const lib = readdirSync(join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(ROOT, 'lib', f), 'utf8'))
      .join('\n');
    const processMetrics = new Set(
      createProcessMetrics()
        .getMetricsAsArray()
        .map((m) => (m as unknown as { name: string }).name),
    );
    const recorded = recordedNames();
    const base = (name: string) => name.replace(/_(bucket|sum|count)$/, '');
    const undeclared = (names: string[]) =>
      names.filter((name) => {
        if (name === 'up' || recorded.has(name)) return false;
        if (METRICS_EXPORTED_ELSEWHERE.includes(name) || TEMPORAL_METRICS_AFTER_FIRST_USE.includes(name))
          return false;
        // The rest of the SDK's names are held to the running worker (prometheus_alert_firing.test.ts).
        if (name.startsWith('temporal_')) return false;
        if (processMetrics.has(name) || processMetrics.has(base(name))) return false;
        return !lib.includes(`'${name}'`) && !lib.includes(`'${base(name)}'`);
      });
    assert.deepEqual(undeclared([...dashboardMetricNames().keys()]), []);
    // The check can fail: a misspelt name is found, a declared one is not.
    assert.deepEqual(undeclared(['lifeline_reconcile_drifts', 'lifeline_reconcile_drift']), [
      'lifeline_reconcile_drifts',
    ]);
  });
});
