import { z } from 'zod';
import { BLOCKLIST_KINDS, type BlocklistEntry, type BlocklistKind } from '../stores/blocklist_store.ts';
import { getNormalisedHost, isHostOrSubdomain } from './url_rules.ts';

export { BLOCKLIST_KINDS, type BlocklistEntry, type BlocklistKind };

const PATTERN_MAX_LENGTH = 2048;

/**
 * A pattern as stored and compared: a host in the URL parser's form (lower case, punycode, no trailing
 * dot; `*.` and a scheme are tolerated and dropped), or a URL prefix as the parser serialises it.
 */
export function normaliseBlocklistPattern(
  pattern: string,
  kind: BlocklistKind,
): string | { problem: string } {
  const value = pattern.trim();
  if (value === '' || value.length > PATTERN_MAX_LENGTH) return { problem: 'must be 1 to 2048 characters' };
  if (kind === 'url_prefix') {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return { problem: 'must be an absolute http(s) URL' };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'must be an http(s) URL' };
    url.hash = '';
    return url.href;
  }
  const bare = value.replace(/^\*\./, '');
  if (/[/?#@\s\\]/.test(bare) || bare.includes('://')) {
    return { problem: 'must be a host name like example.com (use kind "url_prefix" for URLs)' };
  }
  let url: URL;
  try {
    url = new URL(`http://${bare}/`);
  } catch {
    return { problem: 'must be a valid host name' };
  }
  if (url.port !== '') return { problem: 'must be a host name without a port' };
  const host = getNormalisedHost(url);
  return host === '' ? { problem: 'must be a valid host name' } : host;
}

/** POST /api/v1/blocklist body: kind defaults to url_prefix for anything with a scheme, else host. */
export const blocklistInputSchema = z
  .strictObject({
    pattern: z.string().max(PATTERN_MAX_LENGTH, 'must be at most 2048 characters'),
    kind: z.enum(BLOCKLIST_KINDS).optional(),
    reason: z.string().trim().max(500, 'must be at most 500 characters').optional(),
  })
  .transform((input, ctx) => {
    const kind: BlocklistKind = input.kind ?? (input.pattern.includes('://') ? 'url_prefix' : 'host');
    const pattern = normaliseBlocklistPattern(input.pattern, kind);
    if (typeof pattern !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['pattern'], message: pattern.problem });
      return z.NEVER;
    }
    return { pattern, kind, reason: input.reason || null };
  });
export type BlocklistInput = z.infer<typeof blocklistInputSchema>;

/** Every suffix of a host a `host` entry could name (a.b.example.com → itself, b.example.com, example.com, com). */
export function getHostSuffixes(host: string): string[] {
  const labels = host.split('.');
  return labels.map((_, i) => labels.slice(i).join('.'));
}

/** The entries among `entries` that match `url` (already parsed). */
export function matchBlocklist(url: URL, entries: readonly BlocklistEntry[]): BlocklistEntry[] {
  const host = getNormalisedHost(url);
  const href = new URL(url.href);
  href.hash = '';
  return entries.filter((e) =>
    e.kind === 'host' ? isHostOrSubdomain(host, e.pattern) : href.href.startsWith(e.pattern),
  );
}
