// The metric names the Grafana dashboard queries, and the one list of those no process in this tree exports
// yet. tests/ops/prometheus_rules.test.ts checks each name against what the code declares;
// tests/ops/prometheus_alert_firing.test.ts against what the running web process and worker serve.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../scripts/temporal_cli.ts';

/**
 * Names the dashboard may query that no process in this tree exports (none today): a panel built ahead of the
 * code that exports its metric goes here, and out again once that code lands, so the tests then hold the name
 * to what the processes serve.
 */
export const METRICS_EXPORTED_ELSEWHERE: readonly string[] = [];

/**
 * Temporal SDK metrics (the worker's Runtime exporter) that appear only once recorded: a task scheduled, an
 * activity failed. A worker that has run nothing yet does not serve them.
 */
export const TEMPORAL_METRICS_AFTER_FIRST_USE: readonly string[] = [
  'temporal_workflow_task_schedule_to_start_latency_bucket',
  'temporal_activity_schedule_to_start_latency_bucket',
  'temporal_workflow_task_execution_latency_bucket',
  'temporal_activity_execution_latency_bucket',
  'temporal_local_activity_execution_latency_bucket',
  'temporal_activity_execution_failed',
  'temporal_workflow_task_execution_failed',
  'temporal_workflow_failed',
];

const PROMQL_WORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names in a PromQL expression: label matchers, strings, grouping clauses, ranges and Grafana's
 * variables taken out, then every identifier that is not a function call or a keyword.
 */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\$\w+/g, '');
  const names = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const [, name = '', call] = m;
    if (call || PROMQL_WORDS.has(name.toLowerCase()) || /^\d/.test(name)) continue;
    names.add(name);
  }
  return [...names];
}

export interface DashboardPanel {
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { uid: string };
  targets?: { expr: string; refId: string }[];
}

/** The dashboard as stored (ops/grafana/lifeline.json). */
export function readDashboard(): {
  uid: string;
  templating: { list: { name: string }[] };
  panels: DashboardPanel[];
} {
  return JSON.parse(readFileSync(join(ROOT, 'ops', 'grafana', 'lifeline.json'), 'utf8'));
}

/** Every metric name the dashboard's queries use, with the panels that use it. */
export function dashboardMetricNames(): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const panel of readDashboard().panels)
    for (const target of panel.targets ?? [])
      for (const name of metricNamesIn(target.expr))
        names.set(name, [...(names.get(name) ?? []), panel.title]);
  return names;
}

/** The recording rules' names (ops/prometheus/lifeline.rules.yml): Prometheus makes those series itself. */
export function recordedNames(): Set<string> {
  const rules = readFileSync(join(ROOT, 'ops', 'prometheus', 'lifeline.rules.yml'), 'utf8');
  return new Set([...rules.matchAll(/^\s*- record: (\S+)$/gm)].map((m) => m[1]!));
}
