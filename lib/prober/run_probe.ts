// The black-box prober (docs/OPERATIONS.md, "The prober"): asks the public short domain for a rotating sample of
// real codes and the canary, as a reader would, and compares each answer (status and Location) with what Postgres
// says it must be, through the same pure policy the web tier answers with. Availability and latency as seen from
// outside the web process go to the worker's metrics; a failure opens an incident, a clean probe closes it.
import { PROBE_USER_AGENT_PREFIX } from '../clicks/classify_click.ts';
import { getActiveFront } from '../failover/active_front.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { decideRedirect, decideRoutedRedirect } from '../redirect/redirect_policy.ts';
import { deviceOf } from '../redirect/route_choice.ts';
import { toServingRecord } from '../redirect/serving_record.ts';
import { PermanentFailure } from '../shared/errors.ts';
import { DEFAULT_DOMAIN, keyCode } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import {
  closeProbeIncident,
  getProbeRows,
  isSyncedOnBitly,
  listProbeSample,
  type ProbeFailure,
  recordProbeFailures,
} from '../stores/probe_store.ts';
import { getSetting, upsertSetting } from '../stores/settings_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import { ensureCanary } from './probe_canary.ts';
import type { ProbeDeps } from './probe_deps.ts';

export type { ProbeFailure };

export interface ProberDeps {
  sql: Sql;
  logger: Logger;
  resolver: LinkResolver;
  targetPolicy: CanonicalTargetPolicy;
  /** Absent: the prober is not configured on this worker, and its activity refuses to run. */
  probe?: ProbeDeps | undefined;
}

/** The User-Agent of every probe: the web tier counts no click for it (lib/clicks/classify_click.ts). */
export const PROBE_USER_AGENT = `${PROBE_USER_AGENT_PREFIX}1 (+availability probe; docs/OPERATIONS.md#the-prober)`;
/** Where the rotating sample goes on from (settings). */
const CURSOR_SETTING = 'probe.cursor';
/** Failures an incident's report keeps per probe (the counts are exact). */
const FAILURE_EXAMPLES = 5;

export type ProbeResult = 'ok' | 'mismatch' | 'error';
type Expected = ReturnType<typeof expectedAnswer>;

export interface ProbeReport {
  /**
   * Codes asked (the canary included), their results, and up to five failures: every short domain's together;
   * `canary` and `incident` are the default domain's (each domain's own are in `domains`).
   */
  checked: number;
  ok: number;
  mismatch: number;
  error: number;
  canary: string | null;
  failures: ProbeFailure[];
  /** The incident this probe opened or added to, or closed; null when none changed. */
  incident: { id: string; change: 'opened' | 'extended' | 'closed' } | null;
  /** With several short domains: each domain's own report (`domain`: its host name), in SHORT_DOMAINS order. */
  domains?: (Omit<ProbeReport, 'domains'> & { domain: string })[];
}

/** One short domain as the prober asks it. */
type ProbedDomain = ProbeDeps['domains'][number];

/** "301 https://…", "410", "200": a reader's answer in one comparable string (as lib/failover/verify_fronts.ts). */
function describe(status: number, location: string | null | undefined): string {
  return location ? `${status} ${location}` : String(status);
}

/**
 * What Postgres says the short domain must answer for `row` now, to the probe. A link with routing rules answers
 * the probe as the reader it is (ADR 0080): a desktop with no language and no country, so a `desktop` rule
 * chooses; Bitly (`viaBitly`) holds the link's own target only.
 */
export function expectedAnswer(
  row: LinkRow,
  nowMs: number,
  redirect: ProbeDeps['redirect'],
  viaBitly = false,
): { answer: string; location: string | null } {
  const record = toServingRecord(row);
  const decision =
    record.rules === undefined || viaBitly
      ? decideRedirect(row.code, record, nowMs, redirect)
      : decideRoutedRedirect(
          row.code,
          { ...record, rules: record.rules },
          { language: '', device: deviceOf(PROBE_USER_AGENT), country: '' },
          '',
          nowMs,
          redirect,
        );
  return { answer: describe(decision.status, decision.location), location: decision.location ?? null };
}

/** Asks a public short domain for `code` (a key: its code on that domain) as a reader would; never follows the redirect. */
async function ask(
  probe: ProbeDeps,
  domain: ProbedDomain,
  code: string,
): Promise<{ answer: string; status: number; location: string | null } | { failure: string }> {
  const started = performance.now();
  try {
    const response = await fetch(`${domain.baseUrl}/${encodeURIComponent(keyCode(code))}`, {
      redirect: 'manual',
      headers: { 'user-agent': PROBE_USER_AGENT },
      signal: AbortSignal.timeout(probe.timeoutMs),
    });
    probe.metrics.duration.observe({ domain: domain.name }, (performance.now() - started) / 1000);
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get('location');
    return { answer: describe(response.status, location), status: response.status, location };
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    const cause = (error as { cause?: { code?: unknown } }).cause?.code;
    return {
      failure: name === 'TimeoutError' ? `no answer in ${probe.timeoutMs} ms` : String(cause ?? name),
    };
  }
}

/** The next codes of a domain's rotating sample, wrapping around at the end; moves its cursor on. */
async function nextSample(
  sql: Sql,
  probe: ProbeDeps,
  nowMs: number,
  onBitly: boolean,
  domain: string,
): Promise<LinkRow[]> {
  const settledBefore = new Date(nowMs - probe.settleMs);
  // Each domain has its own cursor: the default's keeps the setting it always had.
  const setting = domain === DEFAULT_DOMAIN ? CURSOR_SETTING : `${CURSOR_SETTING}:${domain}`;
  const cursor = (await getSetting<string>(sql, setting)) ?? '';
  let rows = await listProbeSample(sql, { cursor, limit: probe.sample, settledBefore, onBitly, domain });
  if (rows.length < probe.sample && cursor !== '') {
    const seen = new Set(rows.map((r) => r.code));
    const more = await listProbeSample(sql, {
      cursor: '',
      limit: probe.sample - rows.length,
      settledBefore,
      onBitly,
      domain,
    });
    rows = [...rows, ...more.filter((r) => !seen.has(r.code))];
  }
  await upsertSetting(sql, setting, rows.at(-1)?.code ?? '');
  return rows;
}

/**
 * One probe: the canary and the next PROBE_SAMPLE codes, each asked through PROBE_BASE_URL and compared with
 * Postgres. A code whose row changed while it was asked is left out (its answer may rightly be either). Records
 * every result in the metrics; any failure opens (or adds to) the incident, a probe without one closes it.
 */
export async function runProbe(deps: ProberDeps, input: { sample?: number } = {}): Promise<ProbeReport> {
  if (!deps.probe) throw new PermanentFailure('the prober is not configured on this worker');
  const probe = input.sample ? { ...deps.probe, sample: input.sample } : deps.probe;
  const domains: ProbedDomain[] =
    probe.domains.length > 0 ? probe.domains : [{ stored: DEFAULT_DOMAIN, name: '', baseUrl: probe.baseUrl }];
  // One short domain after another, each with its own front, sample, canary and incident (ADR 0073).
  const reports: (Omit<ProbeReport, 'domains'> & { domain: string })[] = [];
  for (const domain of domains)
    reports.push({ domain: domain.name, ...(await probeDomain(deps, probe, domain)) });
  const [first] = reports;
  const { domain: _name, ...head } = first!;
  if (reports.length === 1) return head;
  const total = (key: 'checked' | 'ok' | 'mismatch' | 'error') => reports.reduce((n, r) => n + r[key], 0);
  return {
    ...head,
    checked: total('checked'),
    ok: total('ok'),
    mismatch: total('mismatch'),
    error: total('error'),
    failures: reports.flatMap((r) => r.failures).slice(0, FAILURE_EXAMPLES),
    domains: reports,
  };
}

/** One short domain's probe: its canary and sample asked on its own base, compared, its incident kept. */
async function probeDomain(
  deps: ProberDeps,
  probe: ProbeDeps,
  domain: ProbedDomain,
): Promise<Omit<ProbeReport, 'domains'>> {
  const canary = await ensureCanary(deps, probe.canaryUrl, domain.stored);
  // While Bitly fronts the short domain it answers, with its own status (301): only the Location is ours to expect.
  const onBitly = (await getActiveFront(deps.sql, domain.stored)).active === 'bitly';
  const nowMs = Date.now();
  const sample = await nextSample(deps.sql, probe, nowMs, onBitly, domain.stored);
  const rows = new Map(sample.map((r) => [r.code, r]));
  if (canary && !rows.has(canary) && (!onBitly || (await isSyncedOnBitly(deps.sql, canary)))) {
    const row = (await getProbeRows(deps.sql, [canary])).get(canary);
    if (row) rows.set(canary, row);
  }
  const asked = await Promise.all(
    [...rows.values()].map(async (row) => ({
      row,
      expected: expectedAnswer(row, nowMs, probe.redirect, onBitly),
      got: await ask(probe, domain, row.code),
    })),
  );
  const matches = (got: { status: number; answer: string; location: string | null }, expected: Expected) =>
    onBitly
      ? got.status >= 300 && got.status < 400 && got.location === expected.location
      : got.answer === expected.answer;
  // A wrong answer for a row that changed meanwhile proves nothing: left out.
  const wrong = asked.filter((a) => !('failure' in a.got) && !matches(a.got, a.expected));
  const now = await getProbeRows(
    deps.sql,
    wrong.map((a) => a.row.code),
  );
  const report: Omit<ProbeReport, 'domains'> = {
    checked: 0,
    ok: 0,
    mismatch: 0,
    error: 0,
    canary,
    failures: [],
    incident: null,
  };
  for (const { row, expected, got } of asked) {
    let result: ProbeResult;
    let actual: string;
    if ('failure' in got) {
      result = 'error';
      actual = got.failure;
    } else if (got.status >= 500) {
      result = 'error';
      actual = got.answer;
    } else if (matches(got, expected)) {
      result = 'ok';
      actual = got.answer;
    } else {
      if (now.get(row.code)?.version !== row.version) continue;
      result = 'mismatch';
      actual = got.answer;
    }
    report.checked++;
    report[result]++;
    probe.metrics.probes.inc({ result, domain: domain.name });
    if (result !== 'ok' && report.failures.length < FAILURE_EXAMPLES) {
      report.failures.push({ code: row.code, result, expected: expected.answer, actual });
    }
  }
  if (report.failures.length > 0) {
    const { incident, opened } = await recordProbeFailures(deps.sql, {
      mismatches: report.mismatch,
      errors: report.error,
      first: report.failures[0]!,
      last: report.failures.at(-1)!,
      domain: domain.stored,
    });
    report.incident = { id: incident.id, change: opened ? 'opened' : 'extended' };
    if (opened) probe.metrics.incidentsOpened.inc({ domain: domain.name });
    deps.logger.error(
      {
        incident: incident.id,
        opened,
        domain: domain.name,
        baseUrl: domain.baseUrl,
        failures: report.failures,
      },
      'probe failed: the short domain answered wrongly or not at all',
    );
  } else if (report.checked > 0) {
    const closed = await closeProbeIncident(deps.sql, domain.stored);
    if (closed) {
      report.incident = { id: closed.id, change: 'closed' };
      deps.logger.info(
        { incident: closed.id, domain: domain.name, checked: report.checked },
        'probe passed: incident closed',
      );
    }
  }
  return report;
}
