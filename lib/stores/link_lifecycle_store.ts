import type { LinkRow } from './link_rows.ts';
import { findCodeWindowEnd } from './link_store.ts';
import type { Db, Sql } from './sql.ts';

// Link SQL of the lifecycle workflows (expiry, re-scans). Everything else about links is in link_store.ts.

/**
 * Marks the link `expired` when it is active and Postgres's clock has reached its expires_at; returns the
 * expiry it had, or null when it was not due (or not active). What an old per-link timer's activity still calls.
 */
export async function expireLinkIfDue(db: Db, code: string): Promise<Date | null> {
  const rows = await db<{ expiresAt: Date }[]>`
    UPDATE links SET status = 'expired', updated_at = now(), version = version + 1
    WHERE code = ${code} AND status = 'active' AND deleted_at IS NULL AND expires_at <= now()
    RETURNING expires_at AS "expiresAt"`;
  return rows[0]?.expiresAt ?? null;
}

/** A link the sweeper expired, with the expiry it had. */
export interface ExpiredLink {
  code: string;
  expiresAt: Date;
}

/**
 * Marks up to `limit` due links `expired` (active, not deleted, expires_at reached by Postgres's clock), oldest
 * due first, in the caller's transaction. Rows another transaction holds (an edit in flight) are skipped, not
 * waited for: the next sweep takes them if they are still due. Through links_expiry_due_idx.
 *
 * The update finds the locked rows by primary key from an array (one index probe each). Joined to the CTE with
 * the due conditions repeated, the planner walked every due row of links_expiry_due_idx for each of the batch's
 * codes when its statistics lagged a burst: 4.9 s for 500 of 100,000 due links, against 0.1 s this way. The
 * conditions need no repeating: the rows the CTE locked met them when it locked them.
 */
export async function expireDueLinks(db: Db, limit: number): Promise<ExpiredLink[]> {
  return db<ExpiredLink[]>`
    WITH due AS (
      SELECT code FROM links
      WHERE status = 'active' AND deleted_at IS NULL AND expires_at <= now()
      ORDER BY expires_at, code
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE links AS l SET status = 'expired', updated_at = now(), version = l.version + 1
    WHERE l.code = ANY (ARRAY(SELECT code FROM due))
    RETURNING l.code, l.expires_at AS "expiresAt"`;
}

/**
 * The next expiry the sweeper must wake for: the earliest expires_at of live active links (the first entry of
 * links_expiry_due_idx), and how far it is from Postgres's clock (0 or less: due now). Null: none expires.
 */
export async function getNextExpiry(db: Db): Promise<{ atMs: number; inMs: number } | null> {
  const [row] = await db<{ at: Date; inMs: number }[]>`
    SELECT expires_at AS at, ceil(extract(epoch FROM expires_at - now()) * 1000)::float8 AS "inMs"
    FROM links
    WHERE status = 'active' AND deleted_at IS NULL AND expires_at IS NOT NULL
    ORDER BY expires_at LIMIT 1`;
  return row ? { atMs: row.at.getTime(), inMs: row.inMs } : null;
}

/**
 * Live active links past their expires_at that the sweeper has not expired yet, and the oldest one's lateness
 * (seconds). Readers already get the expired answer (the redirect policy); what lags is the status, the audit
 * entry, the webhook and the vendors' copies. A range of links_expiry_due_idx: as cheap as the backlog is short.
 */
export async function getExpiryBacklog(db: Db): Promise<{ due: number; oldestLateSeconds: number }> {
  const [row] = await db<{ due: number; oldestLateSeconds: number | null }[]>`
    SELECT count(*)::int AS due, extract(epoch FROM now() - min(expires_at))::float8 AS "oldestLateSeconds"
    FROM links
    WHERE status = 'active' AND deleted_at IS NULL AND expires_at <= now()`;
  return { due: row?.due ?? 0, oldestLateSeconds: Math.max(0, row?.oldestLateSeconds ?? 0) };
}

/** Where a re-scan run stands: links clicked most recently first, then a sweep by code of anything missed. */
export interface RescanCursor {
  phase: 'recent' | 'sweep';
  /** ISO time of the last link's last click (null: the never-clicked tail). */
  lastClickedAt: string | null;
  code: string;
}

/** A link as a re-scan checks it, with its last click time (null: never clicked). */
export type RescanLink = Pick<
  LinkRow,
  'code' | 'targetUrl' | 'safety' | 'safetyReason' | 'version' | 'routingRules'
> & {
  lastClickedAt: Date | null;
};

/** Index entries one re-scan statement walks at most (about 0.15 s at 10,000,000 links, warm). */
export const RESCAN_WINDOW = 20_000;

/** What one re-scan statement found, and where the next one starts. */
export interface RescanPage {
  /** Up to `limit` links due, in the phase's order. */
  links: RescanLink[];
  /**
   * Past the last link returned, or, when fewer than `limit` were due in the window walked, past the window
   * (the links there that were not due are not read again).
   */
  next: RescanCursor;
  /** True when the phase has nothing after `next`. */
  end: boolean;
}

/**
 * The next links a re-scan should check: live links (active or pending) whose verdict was not verified
 * since the run started, after `cursor`, optionally only those whose target (or a routing rule's) contains
 * `contains`.
 * The `recent` phase walks link_last_clicks by last_clicked_at DESC (index link_last_clicks_recent_idx), then
 * the links never clicked by code; a link clicked while the run goes jumps ahead of the cursor, so the `sweep`
 * phase walks codes for whatever is still unverified.
 *
 * Each statement walks at most RESCAN_WINDOW entries of its index, however few of them are due: a re-scan
 * scoped to a blocklist entry finds a handful of links in ten million, and the sweep after a whole pass finds
 * none. Unbounded, either was one statement over the whole table (at 10,000,000 links: 21 s for the clicked
 * links of a scoped scan, 24 s for the sweep's walk by code), past the activity's heartbeat timeout, so the
 * activity was retried without end. The window is a subquery with a LIMIT joined back to links: when due links
 * are dense (a pass's usual case), the join stops after `limit` of them, as the unbounded statement did (ADR 0100).
 */
export async function listLinksToRescan(
  db: Db,
  options: {
    cursor: RescanCursor;
    startedAt: Date;
    contains?: string | undefined;
    limit: number;
    /** Index entries walked at most (RESCAN_WINDOW). */
    window?: number;
  },
): Promise<RescanPage> {
  const { cursor, limit } = options;
  const windowSize = options.window ?? RESCAN_WINDOW;
  const due = db`l.status IN ('active', 'pending') AND l.deleted_at IS NULL
    AND (l.safety_checked_at IS NULL OR l.safety_checked_at < ${options.startedAt})
    ${
      options.contains === undefined
        ? db``
        : // A routing rule's target is one of the link's destinations (ADR 0080): a blocklist entry can affect it.
          db`AND (position(${options.contains} in lower(l.target_url)) > 0
                  OR position(${options.contains} in lower(coalesce(l.routing_rules::text, ''))) > 0)`
    }`;
  const columns = db`l.code, l.target_url AS "targetUrl", l.safety, l.safety_reason AS "safetyReason", l.version,
    l.routing_rules AS "routingRules"`;

  /** Links by code after `after` (the sweep, or the recent phase's never-clicked tail), within one window. */
  async function byCode(phase: RescanCursor['phase'], after: string, want: number) {
    // The tail's bound on `c.code` says nothing new (it equals `l.code`) but lets the anti-join's walk of
    // link_last_clicks start at the cursor: without it each page read the clicked codes from the first one up
    // to the cursor, so a pass over the tail grew with the square of the archive.
    const neverClicked =
      phase === 'recent'
        ? db`AND NOT EXISTS (SELECT 1 FROM link_last_clicks AS c WHERE c.code = l.code AND c.code > ${after})`
        : db``;
    const links = await db<RescanLink[]>`
      SELECT ${columns}, NULL::timestamptz AS "lastClickedAt"
      FROM (SELECT code FROM links WHERE code > ${after} ORDER BY code LIMIT ${windowSize}) AS w
      JOIN links AS l ON l.code = w.code
      -- Implied by the join, but a merge join the planner may choose then starts at the cursor too.
      WHERE l.code > ${after} AND ${due} ${neverClicked}
      ORDER BY w.code LIMIT ${want}`;
    if (links.length === want) return { links, next: links.at(-1)!.code, end: false };
    const windowEnd = await findCodeWindowEnd(db, after, windowSize);
    return windowEnd
      ? { links, next: windowEnd, end: false }
      : { links, next: links.at(-1)?.code ?? after, end: true };
  }

  if (cursor.phase === 'sweep') {
    // The sweep's cursor is the code alone: the last click time is not read (no join).
    const page = await byCode('sweep', cursor.code, limit);
    return {
      links: page.links,
      next: { phase: 'sweep', lastClickedAt: null, code: page.next },
      end: page.end,
    };
  }
  let clicked: RescanLink[] = [];
  if (cursor.lastClickedAt !== null || cursor.code === '') {
    // `<= t AND (< t OR code > c)`: the first term bounds the index scan, the second skips what came before.
    const after =
      cursor.lastClickedAt === null
        ? db``
        : db`AND c.last_clicked_at <= ${cursor.lastClickedAt}
             AND (c.last_clicked_at < ${cursor.lastClickedAt} OR c.code > ${cursor.code})`;
    clicked = await db<RescanLink[]>`
      SELECT ${columns}, w.last_clicked_at AS "lastClickedAt"
      FROM (SELECT c.code, c.last_clicked_at FROM link_last_clicks AS c WHERE true ${after}
            ORDER BY c.last_clicked_at DESC, c.code LIMIT ${windowSize}) AS w
      JOIN links AS l ON l.code = w.code
      WHERE ${due}
      ORDER BY w.last_clicked_at DESC, w.code LIMIT ${limit}`;
    const last = clicked.at(-1);
    if (last) {
      const position = { lastClickedAt: last.lastClickedAt!.toISOString(), code: last.code };
      if (clicked.length === limit)
        return { links: clicked, next: { phase: 'recent', ...position }, end: false };
    }
    const [windowEnd] = await db<{ at: Date; code: string }[]>`
      SELECT c.last_clicked_at AS at, c.code FROM link_last_clicks AS c WHERE true ${after}
      ORDER BY c.last_clicked_at DESC, c.code OFFSET ${windowSize - 1} LIMIT 1`;
    if (windowEnd) {
      const next = {
        phase: 'recent' as const,
        lastClickedAt: windowEnd.at.toISOString(),
        code: windowEnd.code,
      };
      return { links: clicked, next, end: false };
    }
  }
  // The never-clicked tail, by code (from its start when the clicked part just ran out).
  const tail = await byCode(
    'recent',
    cursor.lastClickedAt === null ? cursor.code : '',
    limit - clicked.length,
  );
  return {
    links: clicked.concat(tail.links),
    next: { phase: 'recent', lastClickedAt: null, code: tail.next },
    end: tail.end,
  };
}

/** Rows of one page a touch updates in the same statement (the page's free space holds about this many copies). */
export const TOUCH_ROWS_PER_PAGE = 2;

/**
 * Records a complete check of links whose verdict did not change (no version bump: nothing changed), in
 * statements of their own (the pool, not a transaction), so that each stays a heap-only update.
 *
 * A row's new version can stay on its page, with no new entry in any of the table's 14 indexes, only while the
 * page has room for it; links leaves a fifth of each page free (fillfactor 80), about two or three copies of a row.
 * Links made together share pages, and a re-scan's chunk takes them together (the most recently clicked are the
 * most recently made), so one UPDATE of 500 codes found 15 to 20 on a page: past the first few, each new version
 * went to another page and into every index, the three trigram GINs (`fastupdate` off, migration 0006) costing
 * most. Measured on the 100,000-link seed: 390 ms for 500 codes, 28% of them heap-only, most of each re-scan
 * pass. The codes are grouped by page and updated in rounds of at most two per page, each its own statement: a
 * round's old versions are dead once it commits, and the next round's read of the page prunes them and makes
 * the room again. The same chunks: 52 ms in 10 rounds, all heap-only. A chunk spread over many pages is one
 * round. If an older snapshot keeps the old versions alive (a long transaction elsewhere), the rounds cost what
 * one statement would (ADR 0100).
 */
export async function touchSafetyCheckedAt(db: Sql, codes: string[], at: Date): Promise<void> {
  if (codes.length === 0) return;
  // The page of each row, from its address: (block, offset) read as a point.
  const rows = await db<{ code: string; page: string }[]>`
    SELECT l.code, (l.ctid::text::point)[0]::bigint::text AS page
    FROM unnest(${db.array(codes)}::text[]) AS t(code) JOIN links AS l ON l.code = t.code COLLATE "C"`;
  // A join on unnest, not `code = ANY($1)`: for an array the planner picks the trigram GIN index on code,
  // measured at ~2.5 s for 500 codes against ~15 ms through the primary key (COLLATE "C" to match it).
  for (const round of planTouchRounds(rows)) {
    await db`
      UPDATE links AS l SET safety_checked_at = ${at}
      FROM unnest(${db.array(round)}::text[]) AS t(code) WHERE l.code = t.code COLLATE "C"`;
  }
}

/** The codes in rounds: each round holds at most TOUCH_ROWS_PER_PAGE codes of any one page. */
export function planTouchRounds(rows: readonly { code: string; page: string }[]): string[][] {
  const onPage = new Map<string, number>();
  const rounds: string[][] = [];
  for (const { code, page } of rows) {
    const seen = onPage.get(page) ?? 0;
    onPage.set(page, seen + 1);
    const round = Math.floor(seen / TOUCH_ROWS_PER_PAGE);
    if (round === rounds.length) rounds.push([]);
    rounds[round]!.push(code);
  }
  return rounds;
}

/** Codes with an audit entry of `action` and exactly `reason` since `since` (a run's own changes). */
export async function listCodesAuditedSince(
  db: Db,
  options: { action: string; reason: string; since: Date },
): Promise<string[]> {
  const rows = await db<{ code: string }[]>`
    SELECT DISTINCT code FROM audit_log
    WHERE created_at >= ${options.since} AND action = ${options.action} AND reason = ${options.reason}
      AND code IS NOT NULL`;
  return rows.map((r) => r.code);
}

/** A re-scan's outcome, read back from Postgres so that retries and crashes can neither lose nor double it. */
export interface RescanSummary {
  /** Live links in scope whose verdict was verified since the run started. */
  verified: number;
  /** Live links in scope not verified by this run (Safe Browsing unavailable). */
  unverified: number;
  /** Verdicts this run changed, by the verdict they changed to. */
  changedTo: Record<string, number>;
}

/** Counts what a re-scan run did (see RescanSummary). */
export async function summarizeRescan(
  db: Db,
  options: { startedAt: Date; reason: string; contains?: string | undefined },
): Promise<RescanSummary> {
  const scope =
    options.contains === undefined ? db`` : db`AND position(${options.contains} in lower(target_url)) > 0`;
  const [counts] = await db<{ verified: number; unverified: number }[]>`
    SELECT count(*) FILTER (WHERE safety_checked_at >= ${options.startedAt})::int AS verified,
           count(*) FILTER (WHERE safety_checked_at IS NULL OR safety_checked_at < ${options.startedAt})::int
             AS unverified
    FROM links WHERE status IN ('active', 'pending') AND deleted_at IS NULL ${scope}`;
  const changes = await db<{ safety: string; links: number }[]>`
    SELECT after->>'safety' AS safety, count(DISTINCT code)::int AS links FROM audit_log
    WHERE created_at >= ${options.startedAt} AND action = 'link.safety_changed' AND reason = ${options.reason}
    GROUP BY 1`;
  return {
    verified: counts?.verified ?? 0,
    unverified: counts?.unverified ?? 0,
    changedTo: Object.fromEntries(changes.map((c) => [c.safety, c.links])),
  };
}
