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
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ROOT } from '../../scripts/temporal_cli.ts';

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

/** GitHub's anchor for a markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
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
  test('every alert links a runbook section that exists', () => {
    const rules = readFileSync(join(PROMETHEUS_DIR, 'lifeline.rules.yml'), 'utf8');
    const urls = [...rules.matchAll(/runbook_url: (\S+)/g)].map((m) => m[1]!);
    assert.equal(urls.length, alertNames().length, 'one runbook_url per alert');
    const anchors = anchorsOf(readFileSync(join(ROOT, 'docs', 'OPERATIONS.md'), 'utf8'));
    const missing = urls.filter((url) => {
      const [path, anchor] = url.split('#');
      return path !== 'docs/OPERATIONS.md' || !anchor || !anchors.has(anchor);
    });
    assert.deepEqual(missing, []);
  });

  test('the Grafana dashboard: panels with queries, on the datasource variable, without overlapping', () => {
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'ops', 'grafana', 'lifeline.json'), 'utf8')) as {
      uid: string;
      templating: { list: { name: string }[] };
      panels: {
        type: string;
        title: string;
        gridPos: { x: number; y: number; w: number; h: number };
        datasource?: { uid: string };
        targets?: { expr: string; refId: string }[];
      }[];
    };
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
});
