// destination_states (migrations/0090_destination_checks.sql), the archive and dead-destination side: the archived
// copy of each link's destination, the fallback applied on a death, the proposed retarget of a moved one, and the
// policies (links.dead_policy, destination_host_policies). The checks write outcome, verdict and chain; this file
// writes them only for tests and tools that stand in for the checks (writeDestinationVerdict).
import type { Db } from './sql.ts';

export const DEAD_POLICIES = ['notify', 'fallback', 'off'] as const;
export type DeadPolicy = (typeof DEAD_POLICIES)[number];
export const DESTINATION_VERDICTS = ['unchecked', 'ok', 'suspect', 'dead', 'moved'] as const;
export type DestinationVerdict = (typeof DESTINATION_VERDICTS)[number];
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

export interface ChainHop {
  url: string;
  status: number;
  location?: string | null;
}

export interface DestinationStateRow {
  code: string;
  url: string;
  host: string;
  outcome: string | null;
  verdict: DestinationVerdict;
  verdictAt: Date | null;
  httpStatus: number | null;
  finalUrl: string | null;
  chain: ChainHop[];
  error: string | null;
  checkedAt: Date | null;
  archiveState: ArchiveState;
  archiveUrl: string | null;
  archiveAt: Date | null;
  archiveJobId: string | null;
  fallbackSince: Date | null;
  proposedUrl: string | null;
  updatedAt: Date;
}

const STATE_COLUMNS = `
  s.code, s.url, s.host, s.outcome, s.verdict, s.verdict_at AS "verdictAt", s.http_status AS "httpStatus",
  s.final_url AS "finalUrl", s.chain, s.error, s.checked_at AS "checkedAt", s.archive_state AS "archiveState",
  s.archive_url AS "archiveUrl", s.archive_at AS "archiveAt", s.archive_job_id AS "archiveJobId",
  s.fallback_since AS "fallbackSince", s.proposed_url AS "proposedUrl", s.updated_at AS "updatedAt"`;

/** The row for `code`, or null. */
export async function getDestinationState(db: Db, code: string): Promise<DestinationStateRow | null> {
  const rows = await db<DestinationStateRow[]>`
    SELECT ${db.unsafe(STATE_COLUMNS)} FROM destination_states AS s WHERE s.code = ${code}`;
  return rows[0] ?? null;
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
    ON CONFLICT (code) DO UPDATE SET
      url = excluded.url, host = excluded.host, outcome = NULL, verdict = 'unchecked', verdict_at = NULL,
      http_status = NULL, final_url = NULL, chain = '[]', tls = NULL, error = NULL, page_title = NULL, checks = 0,
      failures = 0, first_failed_at = NULL, checked_at = NULL, next_check_at = now(), archive_state = 'none',
      archive_url = NULL, archive_at = NULL, archive_job_id = NULL, fallback_since = NULL, proposed_url = NULL,
      updated_at = now()
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

/**
 * Writes a check's verdict as the destination checks do (tests and tools standing in for them): the outcome,
 * verdict, final URL and chain of the row's URL, inserting the row when absent.
 */
export async function writeDestinationVerdict(
  db: Db,
  input: {
    code: string;
    url: string;
    host: string;
    outcome: string;
    verdict: DestinationVerdict;
    httpStatus?: number | null;
    finalUrl?: string | null;
    chain?: ChainHop[];
  },
): Promise<void> {
  await db`
    INSERT INTO destination_states AS s (code, url, host, outcome, verdict, verdict_at, http_status, final_url, chain,
      checks, checked_at)
    VALUES (${input.code}, ${input.url}, ${input.host}, ${input.outcome}, ${input.verdict}, now(),
      ${input.httpStatus ?? null}, ${input.finalUrl ?? null}, ${db.json((input.chain ?? []) as never)}, 1, now())
    ON CONFLICT (code) DO UPDATE SET url = excluded.url, host = excluded.host, outcome = excluded.outcome,
      verdict = excluded.verdict, verdict_at = now(), http_status = excluded.http_status,
      final_url = excluded.final_url, chain = excluded.chain, checks = s.checks + 1, checked_at = now(),
      updated_at = now()`;
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
export interface DestinationListRow extends DestinationStateRow {
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
      ? db`s.fallback_since IS NOT NULL`
      : input.state === 'proposed'
        ? db`s.proposed_url IS NOT NULL`
        : db`s.verdict = ${input.state}`;
  const after = input.after
    ? db`AND (coalesce(s.verdict_at, s.updated_at), s.code) < (${input.after.verdictAt}, ${input.after.code})`
    : db``;
  return db<DestinationListRow[]>`
    SELECT ${db.unsafe(STATE_COLUMNS)}, l.title, l.site, l.post_id AS "postId", l.dead_policy AS "linkPolicy",
      p.dead_policy AS "hostPolicy"
    FROM destination_states AS s
    JOIN links AS l ON l.code = s.code AND l.deleted_at IS NULL
    LEFT JOIN destination_host_policies AS p ON p.host = s.host
    WHERE ${filter} ${after}
    ORDER BY coalesce(s.verdict_at, s.updated_at) DESC, s.code DESC
    LIMIT ${input.limit}`;
}

/** Checked destinations of live links by verdict (the dead-destination share of the metrics). */
export async function countDestinationVerdicts(db: Db): Promise<Record<DestinationVerdict, number>> {
  const rows = await db<{ verdict: DestinationVerdict; n: number }[]>`
    SELECT s.verdict, count(*)::int AS n FROM destination_states AS s
    JOIN links AS l ON l.code = s.code AND l.deleted_at IS NULL AND l.status = 'active'
    GROUP BY s.verdict`;
  const counts: Record<DestinationVerdict, number> = { unchecked: 0, ok: 0, suspect: 0, dead: 0, moved: 0 };
  for (const row of rows) counts[row.verdict] = row.n;
  return counts;
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
