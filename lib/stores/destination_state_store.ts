// destination_states (migrations/0090_destination_checks.sql): what Lifeline last saw at each active link's
// destination. The checker's columns (outcome … next_check_at, url, host) are written here; the archive and
// acting-on-a-death columns belong to their own code and are never touched by these statements.
import type { Db } from './sql.ts';

export const DESTINATION_OUTCOMES = ['ok', 'moved', 'gone', 'soft-404', 'unreachable', 'parked'] as const;
export const DESTINATION_VERDICTS = ['unchecked', 'ok', 'suspect', 'dead', 'moved'] as const;
export type DestinationOutcome = (typeof DESTINATION_OUTCOMES)[number];
export type DestinationVerdict = (typeof DESTINATION_VERDICTS)[number];

/** One hop of a followed redirect chain. */
export interface ChainHop {
  url: string;
  status: number;
  location: string | null;
}

/** TLS as seen on the last https hop; `error` alone when the handshake failed. */
export interface TlsState {
  protocol: string | null;
  issuer: string | null;
  validTo: string | null;
  error: string | null;
}

/** A link's destination state as the link page, the metrics and the dead-link handling read it. */
export interface DestinationState {
  code: string;
  url: string;
  host: string;
  outcome: DestinationOutcome | null;
  verdict: DestinationVerdict;
  verdictAt: Date | null;
  httpStatus: number | null;
  finalUrl: string | null;
  chain: ChainHop[];
  tls: TlsState | null;
  error: string | null;
  pageTitle: string | null;
  checks: number;
  failures: number;
  firstFailedAt: Date | null;
  checkedAt: Date | null;
  nextCheckAt: Date;
  /** False when the link's target changed after this row was written (the next seeding resets it). */
  current: boolean;
}

const STATE_COLUMNS = `d.code, d.url, d.host, d.outcome, d.verdict, d.verdict_at AS "verdictAt",
  d.http_status AS "httpStatus", d.final_url AS "finalUrl", d.chain, d.tls, d.error, d.page_title AS "pageTitle",
  d.checks, d.failures, d.first_failed_at AS "firstFailedAt", d.checked_at AS "checkedAt",
  d.next_check_at AS "nextCheckAt", (d.url = l.target_url) AS current`;

/** The destination state of one link, or null when it has none yet (not checked, not even seeded). */
export async function getDestinationState(db: Db, code: string): Promise<DestinationState | null> {
  const rows = await db.unsafe<DestinationState[]>(
    `SELECT ${STATE_COLUMNS} FROM destination_states d JOIN links l ON l.code = d.code WHERE d.code = $1`,
    [code],
  );
  return rows[0] ?? null;
}

/**
 * Links whose destination has the verdict (`dead` or `moved`; newest verdict first), for the code that acts on a
 * death. Only rows that still describe the link's current target.
 */
export async function listDestinationStatesByVerdict(
  db: Db,
  verdict: DestinationVerdict,
  options: { limit: number; afterCode?: string },
): Promise<DestinationState[]> {
  return db.unsafe<DestinationState[]>(
    `SELECT ${STATE_COLUMNS} FROM destination_states d JOIN links l ON l.code = d.code
     WHERE d.verdict = $1 AND d.url = l.target_url AND d.code > $2
     ORDER BY d.code LIMIT $3`,
    [verdict, options.afterCode ?? '', options.limit],
  );
}

// The host of a canonical target (lib/targets/canonical_url.ts: lower-case scheme and host, punycode), in SQL so a
// seeding of every link is one statement; IPv6 literals keep their brackets off, as URL.hostname does not.
const HOST_OF_TARGET = `lower(substring(l.target_url from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^]]+\\]|[^:/?#]+)'))`;

/**
 * Gives every active link a row, and resets the rows whose link now points elsewhere (a retarget): up to `limit`
 * links per call, the count returned (call again until 0). A link created within the last hour (or retargeted)
 * is due at once; an older one first met here (the first deployment) gets a due time spread over `spreadMs`, so
 * the first cycle does not ask every host at once.
 */
export async function seedDestinationStates(
  db: Db,
  options: { limit: number; spreadMs: number },
): Promise<number> {
  const rows = await db.unsafe<{ code: string }[]>(
    `WITH src AS (
       SELECT l.code, l.target_url, l.created_at, d.code IS NOT NULL AS reset
       FROM links l LEFT JOIN destination_states d ON d.code = l.code
       WHERE l.status = 'active' AND (d.code IS NULL OR d.url <> l.target_url)
       ORDER BY l.code LIMIT $1
     )
     INSERT INTO destination_states (code, url, host, next_check_at)
     SELECT l.code, l.target_url, coalesce(${HOST_OF_TARGET}, ''),
            CASE WHEN l.reset OR l.created_at > now() - interval '1 hour' THEN now()
                 ELSE now() + random() * make_interval(secs => $2::double precision / 1000) END
     FROM src l
     ON CONFLICT (code) DO UPDATE SET
       url = EXCLUDED.url, host = EXCLUDED.host, outcome = NULL, verdict = 'unchecked', verdict_at = NULL,
       http_status = NULL, final_url = NULL, chain = '[]', tls = NULL, error = NULL, page_title = NULL,
       checks = 0, failures = 0, first_failed_at = NULL, checked_at = NULL, next_check_at = now(),
       updated_at = now()
     RETURNING code`,
    [options.limit, options.spreadMs],
  );
  return rows.length;
}

/** A due destination as the checker takes it. */
export interface DueDestination {
  code: string;
  url: string;
  host: string;
  verdict: DestinationVerdict;
  failures: number;
  firstFailedAt: Date | null;
  /** No title yet (the first check reads the page for it: crawl on create). */
  needsTitle: boolean;
}

/**
 * Up to `limit` destinations due by `now`, at most `perHost` of any one host (so one batch is not one host's
 * queue at its polite rate), the longest overdue first. Only active links whose target the row still describes.
 */
export async function takeDueDestinations(
  db: Db,
  options: { now: Date; limit: number; perHost: number },
): Promise<DueDestination[]> {
  return db<DueDestination[]>`
    SELECT code, url, host, verdict, failures, first_failed_at AS "firstFailedAt", needs_title AS "needsTitle"
    FROM (
      SELECT d.code, d.url, d.host, d.verdict, d.failures, d.first_failed_at, d.next_check_at,
             d.page_title IS NULL AS needs_title,
             row_number() OVER (PARTITION BY d.host ORDER BY d.next_check_at, d.code) AS n
      FROM destination_states d JOIN links l ON l.code = d.code
      WHERE d.next_check_at <= ${options.now} AND l.status = 'active' AND l.target_url = d.url
    ) due
    WHERE n <= ${options.perHost}
    ORDER BY next_check_at, code
    LIMIT ${options.limit}`;
}

/** What one check wrote (the verdict already decided by lib/destinations/destination_verdict.ts). */
export interface DestinationCheckRecord {
  code: string;
  url: string;
  outcome: DestinationOutcome | null;
  verdict: DestinationVerdict;
  /** When the verdict last changed (kept when it did not). */
  verdictChanged: boolean;
  httpStatus: number | null;
  finalUrl: string | null;
  chain: ChainHop[];
  tls: TlsState | null;
  error: string | null;
  /** A title read from the page; null keeps the one stored. */
  pageTitle: string | null;
  /** Whether this check counted (false: skipped, e.g. an excluded host; only next_check_at moves). */
  counted: boolean;
  failures: number;
  firstFailedAt: Date | null;
  checkedAt: Date;
  nextCheckAt: Date;
}

/**
 * Writes checks in one statement. A row whose url changed meanwhile (a retarget during the check) is left for
 * the next seeding to reset: the check described the old target.
 */
export async function recordDestinationChecks(
  db: Db,
  records: readonly DestinationCheckRecord[],
): Promise<number> {
  if (records.length === 0) return 0;
  const payload = records.map((r) => ({
    code: r.code,
    url: r.url,
    outcome: r.outcome,
    verdict: r.verdict,
    verdict_changed: r.verdictChanged,
    http_status: r.httpStatus,
    final_url: r.finalUrl,
    chain: r.chain,
    tls: r.tls,
    error: r.error,
    page_title: r.pageTitle,
    counted: r.counted,
    failures: r.failures,
    first_failed_at: r.firstFailedAt?.toISOString() ?? null,
    checked_at: r.checkedAt.toISOString(),
    next_check_at: r.nextCheckAt.toISOString(),
  }));
  const rows = await db.unsafe<{ code: string }[]>(
    `UPDATE destination_states d SET
       outcome = CASE WHEN r.counted THEN r.outcome ELSE d.outcome END,
       verdict = CASE WHEN r.counted THEN r.verdict ELSE d.verdict END,
       verdict_at = CASE WHEN r.counted AND r.verdict_changed THEN r.checked_at ELSE d.verdict_at END,
       http_status = CASE WHEN r.counted THEN r.http_status ELSE d.http_status END,
       final_url = CASE WHEN r.counted THEN r.final_url ELSE d.final_url END,
       chain = CASE WHEN r.counted THEN r.chain ELSE d.chain END,
       tls = CASE WHEN r.counted THEN r.tls ELSE d.tls END,
       error = CASE WHEN r.counted THEN r.error ELSE d.error END,
       page_title = coalesce(r.page_title, d.page_title),
       checks = d.checks + CASE WHEN r.counted THEN 1 ELSE 0 END,
       failures = CASE WHEN r.counted THEN r.failures ELSE d.failures END,
       first_failed_at = CASE WHEN r.counted THEN r.first_failed_at ELSE d.first_failed_at END,
       checked_at = CASE WHEN r.counted THEN r.checked_at ELSE d.checked_at END,
       next_check_at = r.next_check_at,
       updated_at = now()
     FROM jsonb_to_recordset(($1::text)::jsonb) AS r(
       code text, url text, outcome text, verdict text, verdict_changed boolean, http_status smallint,
       final_url text, chain jsonb, tls jsonb, error text, page_title text, counted boolean, failures integer,
       first_failed_at timestamptz, checked_at timestamptz, next_check_at timestamptz)
     WHERE d.code = r.code AND d.url = r.url
     RETURNING d.code`,
    [JSON.stringify(payload)],
  );
  return rows.length;
}

/** What the destination gauges show: links by verdict, and how overdue the oldest check is. */
export interface DestinationOverview {
  byVerdict: Record<DestinationVerdict, number>;
  /** Seconds the longest-waiting active link has been due (a new link without a row counts from creation). */
  oldestDueAgeSeconds: number;
}

export async function getDestinationOverview(db: Db): Promise<DestinationOverview> {
  const [verdicts, [oldest]] = await Promise.all([
    db<{ verdict: DestinationVerdict; n: number }[]>`
      SELECT d.verdict, count(*)::int AS n FROM destination_states d JOIN links l ON l.code = d.code
      WHERE l.status = 'active' AND l.target_url = d.url GROUP BY d.verdict`,
    db<{ age: number | null }[]>`
      SELECT extract(epoch FROM now() - least(
        (SELECT min(d.next_check_at) FROM destination_states d JOIN links l ON l.code = d.code
          WHERE d.next_check_at <= now() AND l.status = 'active' AND l.target_url = d.url),
        (SELECT min(l.created_at) FROM links l LEFT JOIN destination_states d ON d.code = l.code
          WHERE l.status = 'active' AND d.code IS NULL)))::float8 AS age`,
  ]);
  const byVerdict = Object.fromEntries(DESTINATION_VERDICTS.map((v) => [v, 0])) as Record<
    DestinationVerdict,
    number
  >;
  for (const row of verdicts) byVerdict[row.verdict] = row.n;
  return { byVerdict, oldestDueAgeSeconds: Math.max(0, oldest?.age ?? 0) };
}
