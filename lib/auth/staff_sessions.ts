// A staff member's sessions as they (or an admin) see them, and ending them: one, all but this one, or all.
import ipaddr from 'ipaddr.js';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  deleteOtherUserSessions,
  deleteUserSession,
  deleteUserSessions,
  listUserSessions,
  type SessionMethod,
} from '../stores/session_store.ts';
import type { Db, Sql } from '../stores/sql.ts';

export interface SessionView {
  /** The session's stored key (the SHA-256 of its cookie value: it signs nobody in). */
  id: string;
  createdAt: Date;
  lastSeenAt: Date;
  /** "Firefox on Linux": enough to recognise a device, not the whole User-Agent. */
  device: string;
  /** The address cut to its network (IPv4 /24, IPv6 /48): where, roughly, without tracking anyone. */
  network: string;
  method: SessionMethod;
  current: boolean;
}

const BROWSERS: [RegExp, string][] = [
  [/Edg(e|A|iOS)?\//, 'Edge'],
  [/OPR\//, 'Opera'],
  [/Firefox\//, 'Firefox'],
  [/Chrom(e|ium)\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/curl\//, 'curl'],
];
const SYSTEMS: [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad|iOS/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** A User-Agent's browser family and system, or "unknown". */
export function describeDevice(userAgent: string | null): string {
  if (!userAgent) return 'unknown';
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? 'unknown';
}

/** An address as the list shows it: IPv4 to its /24, IPv6 to its /48; anything else is not shown. */
export function truncateAddress(ip: string | null): string {
  if (!ip) return '—';
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (!ipaddr.isValid(bare)) return '—';
  const address = ipaddr.process(bare);
  if (address.kind() === 'ipv4') {
    const [a, b, c] = (address as ipaddr.IPv4).octets;
    return `${a}.${b}.${c}.0/24`;
  }
  const parts = (address as ipaddr.IPv6).parts.slice(0, 3);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0, 0]).toString()}/48`;
}

/** A user's live sessions, the one asking marked `current`. */
export async function listSessions(db: Db, userId: number, currentIdHash?: string): Promise<SessionView[]> {
  const rows = await listUserSessions(db, userId);
  return rows.map((r) => ({
    id: r.idHash,
    createdAt: r.createdAt,
    lastSeenAt: r.lastSeenAt,
    device: describeDevice(r.userAgent),
    network: truncateAddress(r.ip),
    method: r.method,
    current: r.idHash === currentIdHash,
  }));
}

/** Ends one of `userId`'s sessions (audited); false when it is not theirs or already over. */
export async function revokeSession(
  sql: Sql,
  userId: number,
  sessionId: string,
  actor: string,
): Promise<boolean> {
  if (!/^[0-9a-f]{64}$/.test(sessionId)) return false;
  return sql.begin(async (tx) => {
    const ended = await deleteUserSession(tx, userId, sessionId);
    if (ended) {
      await insertAuditEntry(tx, { code: null, actor, action: 'session.revoked', after: { userId } });
    }
    return ended;
  });
}

/** Ends every session of `userId` but `keepIdHash` (or every one without it); the number ended (audited). */
export async function revokeSessions(
  sql: Sql,
  userId: number,
  actor: string,
  keepIdHash?: string,
): Promise<number> {
  return sql.begin(async (tx) => {
    let ended: number;
    if (keepIdHash) ended = await deleteOtherUserSessions(tx, userId, keepIdHash);
    else {
      const before = await listUserSessions(tx, userId);
      await deleteUserSessions(tx, userId);
      ended = before.length;
    }
    await insertAuditEntry(tx, {
      code: null,
      actor,
      action: 'session.revoked_all',
      after: { userId, ended, keptCurrent: Boolean(keepIdHash) },
    });
    return ended;
  });
}
