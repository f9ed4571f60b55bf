// destination_states (migrations/0090_destination_checks.sql): what Lifeline last saw at each active link's
// destination, what it kept of it, and what it did about a death. Two halves, each written by its own code:
//   the checks (lib/destinations/check_due_destinations.ts): url, host, outcome … next_check_at — seeding the
//     rows, taking the due ones, recording checks;
//   the archive and the acting on a death (lib/archive/, lib/destinations/act_on_destination.ts): archive_state …
//     proposed_url, links.fallback_url (migration 0092) and the policies (links.dead_policy,
//     destination_host_policies).
// Neither half's statements touch the other's columns, except a retarget: a new target is a new destination, so
// the row is reset whole (RESET_FOR_NEW_URL), by whichever code meets the new URL first (the seeding of the checks,
// or the archive of a created or retargeted link). The links row's fallback_url is cleared by migration 0092's
// trigger in the same update that changes target_url.
import type { Db } from './sql.ts';

export const DESTINATION_OUTCOMES = ['ok', 'moved', 'gone', 'soft-404', 'unreachable', 'parked'] as const;
export const DESTINATION_VERDICTS = ['unchecked', 'ok', 'suspect', 'dead', 'moved'] as const;
export type DestinationOutcome = (typeof DESTINATION_OUTCOMES)[number];
export type DestinationVerdict = (typeof DESTINATION_VERDICTS)[number];
export const DEAD_POLICIES = ['notify', 'fallback', 'off'] as const;
export type DeadPolicy = (typeof DEAD_POLICIES)[number];
export const ARCHIVE_STATES = [
  'none',
  'requested',
  'saved',
  'found',
  'missing',
  'failed',
  'skipped',
] as const;
export type ArchiveState = (typeof ARCHIVE_STATES)[number];

/** One hop of a followed redirect chain. */
export interface ChainHop {
  url: string;
  status: number;
  location?: string | null;
}

/** TLS as seen on the last https hop; `error` alone when the handshake failed. */
export interface TlsState {
  protocol: string | null;
  issuer: string | null;
  validTo: string | null;
  error: string | null;
}

/** A link's destination state as the link page, the metrics, the archive and the dead-link handling read it. */
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
  archiveState: ArchiveState;
  archiveUrl: string | null;
  archiveAt: Date | null;
  archiveJobId: string | null;
  fallbackSince: Date | null;
  proposedUrl: string | null;
  updatedAt: Date;
  /** False when the link's target changed after this row was written (the next seeding resets it). */
  current: boolean;
}

const STATE_COLUMNS = `d.code, d.url, d.host, d.outcome, d.verdict, d.verdict_at AS "verdictAt",
  d.http_status AS "httpStatus", d.final_url AS "finalUrl", d.chain, d.tls, d.error, d.page_title AS "pageTitle",
  d.checks, d.failures, d.first_failed_at AS "firstFailedAt", d.checked_at AS "checkedAt",
  d.next_check_at AS "nextCheckAt", d.archive_state AS "archiveState", d.archive_url AS "archiveUrl",
  d.archive_at AS "archiveAt", d.archive_job_id AS "archiveJobId", d.fallback_since AS "fallbackSince",
  d.proposed_url AS "proposedUrl", d.updated_at AS "updatedAt", (d.url = l.target_url) AS current`;

/**
 * The reset of a row that now describes another URL (a retarget): both halves, the checks' and the archive's,
 * since what was seen and kept of the old destination says nothing of the new one. Due at once.
 */
const RESET_FOR_NEW_URL = `outcome = NULL, verdict = 'unchecked', verdict_at = NULL, http_status = NULL,
  final_url = NULL, chain = '[]', tls = NULL, error = NULL, page_title = NULL, checks = 0, failures = 0,
  first_failed_at = NULL, checked_at = NULL, next_check_at = now(), archive_state = 'none', archive_url = NULL,
  archive_at = NULL, archive_job_id = NULL, fallback_since = NULL, proposed_url = NULL, updated_at = now()`;

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
 * Gives every active link a row, and resets the rows whose link now points elsewhere (a retarget, both halves): up to `limit`
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
       url = EXCLUDED.url, host = EXCLUDED.host, ${RESET_FOR_NEW_URL}
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

/** Hosts walked per statement while a take looks for due rows (each one index probe). */
const HOSTS_PER_WALK = 200;
/** How long a due row that no longer describes an active link's target waits before it is looked at again. */
const STALE_ROW_PARK = '1 day';

/** One take: the rows, and the host to start after next time (round robin over hosts). */
export interface DueTake {
  due: DueDestination[];
  /** null: from the first host (a host may be '', a target whose host could not be read). */
  afterHost: string | null;
}

/**
 * Up to `limit` destinations due by `now`, at most `perHost` of any one host (so one batch is not one host's queue
 * at its polite rate), each host's longest overdue first. Hosts are taken in turn from `afterHost` (wrapping once
 * round), so no host's backlog starves another's, and the cost follows the batch, not the backlog: each host is
 * one probe of the (host, next_check_at, code) index and each row one step along it (migration 0126). Only rows
 * that still describe an active link's target are returned; a due row that does not (the link expired, was
 * blocked or retargeted since) is parked a day, so it is not read again by every take until the next seeding
 * resets it.
 */
export async function takeDueDestinations(
  db: Db,
  options: { now: Date; limit: number; perHost: number; afterHost?: string | null },
): Promise<DueTake> {
  const start = options.afterHost ?? null;
  const due: DueDestination[] = [];
  let cursor: string | null = start;
  let wrapped = false;
  for (;;) {
    const walked = await walkHosts(db, cursor, HOSTS_PER_WALK);
    const atEnd = walked.length < HOSTS_PER_WALK;
    // The second lap stops at the host the take started after (read last, as the lap's end).
    const hosts = wrapped ? walked.filter((h) => start === null || h <= start) : walked;
    const lapOver = wrapped && (atEnd || hosts.length < walked.length);
    if (hosts.length > 0) {
      const want = options.limit - due.length;
      const rows = await dueOfHosts(db, hosts, options.now, options.perHost, want);
      const stale = rows.filter((r) => !r.live).map((r) => r.code);
      if (stale.length > 0)
        await db`UPDATE destination_states SET next_check_at = now() + ${STALE_ROW_PARK}::interval
                 WHERE code IN ${db(stale)} AND next_check_at <= ${options.now}`;
      for (const { live, ...row } of rows) if (live) due.push(row);
      if (rows.length === want) {
        const last = (rows[rows.length - 1] as DueRow).host;
        if (due.length === options.limit) {
          // Full: the next take starts with the host read last, whose other due rows wait for it.
          const i = hosts.indexOf(last);
          return { due, afterHost: i > 0 ? (hosts[i - 1] as string) : cursor };
        }
        // Stale rows took places (they are parked now): read on after that host; the rest of its rows wait.
        cursor = last;
        continue;
      }
      cursor = hosts[hosts.length - 1] as string;
    }
    if (lapOver) break;
    if (atEnd) {
      if (start === null || wrapped) return { due, afterHost: null };
      wrapped = true;
      cursor = null;
    }
  }
  return { due, afterHost: cursor };
}

interface DueRow extends DueDestination {
  /** The row still describes an active link's target. */
  live: boolean;
}

/** Up to `limit` distinct hosts after `after` (null: from the first), in order: one index probe each (a loose index scan). */
async function walkHosts(db: Db, after: string | null, limit: number): Promise<string[]> {
  const first =
    after === null
      ? db`SELECT host, 1 FROM destination_states ORDER BY host LIMIT 1`
      : db`SELECT host, 1 FROM destination_states WHERE host > ${after} ORDER BY host LIMIT 1`;
  const rows = await db<{ host: string }[]>`
    WITH RECURSIVE walk(host, n) AS (
      (${first})
      UNION ALL
      SELECT (SELECT d.host FROM destination_states d WHERE d.host > w.host ORDER BY d.host LIMIT 1), w.n + 1
      FROM walk w WHERE w.host IS NOT NULL AND w.n < ${limit}
    )
    SELECT host FROM walk WHERE host IS NOT NULL`;
  return rows.map((r) => r.host);
}

/** For each host in order, its oldest due rows (at most `perHost`), up to `limit` in all. */
async function dueOfHosts(
  db: Db,
  hosts: string[],
  now: Date,
  perHost: number,
  limit: number,
): Promise<DueRow[]> {
  return db<DueRow[]>`
    SELECT due.code, due.url, due.host, due.verdict, due.failures, due.first_failed_at AS "firstFailedAt",
           due.needs_title AS "needsTitle", due.live
    FROM unnest(${hosts}::text[]) WITH ORDINALITY AS h(host, ord)
    CROSS JOIN LATERAL (
      SELECT d.code, d.url, d.host, d.verdict, d.failures, d.first_failed_at, d.next_check_at,
             d.page_title IS NULL AS needs_title,
             coalesce(l.status = 'active' AND l.target_url = d.url, false) AS live
      FROM destination_states d LEFT JOIN links l ON l.code = d.code
      WHERE d.host = h.host AND d.next_check_at <= ${now}
      ORDER BY d.next_check_at, d.code
      LIMIT ${perHost}
    ) due
    ORDER BY h.ord, due.next_check_at, due.code
    LIMIT ${limit}`;
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

/**
 * Makes `code`'s row describe `url`: inserted when absent, reset when it described another URL (a retarget:
 * what was seen and kept of the old destination says nothing of the new one). True when the row was inserted
 * or reset. A retarget has already lifted the link's fallback (the trigger of migration 0092), so the reset
 * clears fallback_since with the rest.
 */
export async function ensureDestinationRow(
  db: Db,
  input: { code: string; url: string; host: string },
): Promise<boolean> {
  const rows = await db`
    INSERT INTO destination_states AS s (code, url, host) VALUES (${input.code}, ${input.url}, ${input.host})
    ON CONFLICT (code) DO UPDATE SET url = excluded.url, host = excluded.host, ${db.unsafe(RESET_FOR_NEW_URL)}
    WHERE s.url IS DISTINCT FROM excluded.url
    RETURNING 1`;
  return rows.length > 0;
}

/** Records a Save Page Now job for the row's URL (nothing when the row has moved on to another URL). */
export async function recordArchiveRequested(
  db: Db,
  input: { code: string; url: string; jobId: string },
): Promise<boolean> {
  const rows = await db`
    UPDATE destination_states SET archive_state = 'requested', archive_job_id = ${input.jobId}, updated_at = now()
    WHERE code = ${input.code} AND url = ${input.url} RETURNING 1`;
  return rows.length > 0;
}

/**
 * Records what became of the archived copy of the row's URL: `saved` (our capture) or `found` (an existing
 * snapshot) with its URL and time; `missing`, `failed` or `skipped` without one (an earlier copy is kept).
 * Nothing when the row has moved on to another URL.
 */
export async function recordArchiveResult(
  db: Db,
  input: {
    code: string;
    url: string;
    state: Exclude<ArchiveState, 'none' | 'requested'>;
    archiveUrl?: string | null;
    archiveAt?: Date | null;
  },
): Promise<boolean> {
  const withCopy = input.state === 'saved' || input.state === 'found';
  const rows = withCopy
    ? await db`
        UPDATE destination_states SET archive_state = ${input.state}, archive_url = ${input.archiveUrl ?? null},
          archive_at = ${input.archiveAt ?? null}, updated_at = now()
        WHERE code = ${input.code} AND url = ${input.url} RETURNING 1`
    : await db`
        UPDATE destination_states SET archive_state = CASE WHEN archive_url IS NULL THEN ${input.state} ELSE archive_state END,
          updated_at = now()
        WHERE code = ${input.code} AND url = ${input.url} RETURNING 1`;
  return rows.length > 0;
}

/** The link's own dead policy, its host's, and whether it is bound to a WordPress post. */
export interface DeadPolicyContext {
  linkPolicy: DeadPolicy | null;
  hostPolicy: DeadPolicy | null;
}

/** The link's dead_policy and the policy of its destination's host (null: not set). */
export async function getDeadPolicies(db: Db, code: string, host: string): Promise<DeadPolicyContext> {
  const rows = await db<{ linkPolicy: DeadPolicy | null; hostPolicy: DeadPolicy | null }[]>`
    SELECT (SELECT dead_policy FROM links WHERE code = ${code}) AS "linkPolicy",
           (SELECT dead_policy FROM destination_host_policies WHERE host = ${host}) AS "hostPolicy"`;
  return rows[0] ?? { linkPolicy: null, hostPolicy: null };
}

/** Sets (or with null clears) a link's own dead policy; false when there is no such link. */
export async function setLinkDeadPolicy(db: Db, code: string, policy: DeadPolicy | null): Promise<boolean> {
  const rows =
    await db`UPDATE links SET dead_policy = ${policy}, updated_at = now() WHERE code = ${code} RETURNING 1`;
  return rows.length > 0;
}

/** Sets (or with null removes) the dead policy of every destination on `host`. */
export async function setHostDeadPolicy(
  db: Db,
  host: string,
  policy: DeadPolicy | null,
  by: string,
): Promise<void> {
  if (policy === null) {
    await db`DELETE FROM destination_host_policies WHERE host = ${host}`;
    return;
  }
  await db`
    INSERT INTO destination_host_policies (host, dead_policy, updated_by) VALUES (${host}, ${policy}, ${by})
    ON CONFLICT (host) DO UPDATE SET dead_policy = excluded.dead_policy, updated_by = excluded.updated_by,
      updated_at = now()`;
}

/**
 * Switches the link to its archived copy (links.fallback_url, a new version for every cache) and marks the row;
 * only while the row still describes the link's target. True when switched.
 */
export async function applyLinkFallback(
  db: Db,
  input: { code: string; url: string; archiveUrl: string },
): Promise<boolean> {
  const rows = await db`
    UPDATE links SET fallback_url = ${input.archiveUrl}, updated_at = now(), version = version + 1
    WHERE code = ${input.code} AND target_url = ${input.url} AND fallback_url IS DISTINCT FROM ${input.archiveUrl}
    RETURNING 1`;
  if (rows.length === 0) return false;
  await db`
    UPDATE destination_states SET fallback_since = coalesce(fallback_since, now()), updated_at = now()
    WHERE code = ${input.code}`;
  return true;
}

/** Lifts the link's fallback: it answers its target again. True when there was one. */
export async function clearLinkFallback(db: Db, code: string): Promise<boolean> {
  const rows = await db`
    UPDATE links SET fallback_url = NULL, updated_at = now(), version = version + 1
    WHERE code = ${code} AND fallback_url IS NOT NULL RETURNING 1`;
  await db`UPDATE destination_states SET fallback_since = NULL, updated_at = now() WHERE code = ${code} AND fallback_since IS NOT NULL`;
  return rows.length > 0;
}

/** Records (or with null clears) the retarget proposed for a moved destination. */
export async function setProposedUrl(
  db: Db,
  input: { code: string; url: string; proposedUrl: string | null },
): Promise<boolean> {
  const rows = await db`
    UPDATE destination_states SET proposed_url = ${input.proposedUrl}, updated_at = now()
    WHERE code = ${input.code} AND url = ${input.url} AND proposed_url IS DISTINCT FROM ${input.proposedUrl}
    RETURNING 1`;
  return rows.length > 0;
}

/** What the queue of dead destinations lists: the row with its link's title, binding and policy. */
export interface DestinationListRow extends DestinationState {
  title: string | null;
  site: string | null;
  postId: number | null;
  linkPolicy: DeadPolicy | null;
  hostPolicy: DeadPolicy | null;
}

/** Which rows a listing asks for: a verdict, `fallback` (switched to the copy) or `proposed` (a retarget waits). */
export const DESTINATION_LIST_STATES = ['dead', 'moved', 'suspect', 'fallback', 'proposed'] as const;
export type DestinationListState = (typeof DESTINATION_LIST_STATES)[number];

/**
 * One page of destinations in `state`, newest verdict first, after the cursor (the previous page's last
 * verdict time and code). Deleted links are left out.
 */
export async function listDestinationStates(
  db: Db,
  input: {
    state: DestinationListState;
    limit: number;
    after?: { verdictAt: Date; code: string } | undefined;
  },
): Promise<DestinationListRow[]> {
  const filter =
    input.state === 'fallback'
      ? db`d.fallback_since IS NOT NULL`
      : input.state === 'proposed'
        ? db`d.proposed_url IS NOT NULL`
        : db`d.verdict = ${input.state}`;
  const after = input.after
    ? db`AND (coalesce(d.verdict_at, d.updated_at), d.code) < (${input.after.verdictAt}, ${input.after.code})`
    : db``;
  return db<DestinationListRow[]>`
    SELECT ${db.unsafe(STATE_COLUMNS)}, l.title, l.site, l.post_id AS "postId", l.dead_policy AS "linkPolicy",
      p.dead_policy AS "hostPolicy"
    FROM destination_states AS d
    JOIN links AS l ON l.code = d.code AND l.deleted_at IS NULL
    LEFT JOIN destination_host_policies AS p ON p.host = d.host
    WHERE ${filter} ${after}
    ORDER BY coalesce(d.verdict_at, d.updated_at) DESC, d.code DESC
    LIMIT ${input.limit}`;
}

/**
 * Codes of live links to `host` that a policy acts on now (dead, moved, or answering a copy), after `afterCode`,
 * in code order: a host policy's change is applied to them in pages.
 */
export async function listActionableCodesOfHost(
  db: Db,
  host: string,
  limit: number,
  afterCode = '',
): Promise<string[]> {
  const rows = await db<{ code: string }[]>`
    SELECT s.code FROM destination_states AS s JOIN links AS l ON l.code = s.code AND l.deleted_at IS NULL
    WHERE s.host = ${host} AND s.code > ${afterCode}
      AND (s.verdict IN ('dead', 'moved') OR s.fallback_since IS NOT NULL)
    ORDER BY s.code LIMIT ${limit}`;
  return rows.map((r) => r.code);
}

/**
 * Crawl on create: gives each link that has no title the title its destination's page has (first check), only
 * while the link still points at the checked URL. Not a new version: the title is in no serving record, so
 * nothing a reader gets changes. Returns the links filled.
 */
export async function fillLinkTitlesFromPages(
  db: Db,
  pages: readonly { code: string; url: string; title: string }[],
): Promise<{ code: string; title: string }[]> {
  if (pages.length === 0) return [];
  return db.unsafe<{ code: string; title: string }[]>(
    `UPDATE links l SET title = p.title, updated_at = now()
     FROM jsonb_to_recordset(($1::text)::jsonb) AS p(code text, url text, title text)
     WHERE l.code = p.code AND l.target_url = p.url AND l.title IS NULL AND l.deleted_at IS NULL
       AND btrim(p.title) <> ''
     RETURNING l.code, l.title`,
    [JSON.stringify(pages)],
  );
}
