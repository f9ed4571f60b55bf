import { z } from 'zod';
import { BLOCKLIST_KINDS, type BlocklistEntry, type BlocklistKind } from '../stores/blocklist_store.ts';
import { canonicalizeTarget } from '../targets/canonical_url.ts';
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
    // Stored in the canonical form targets are stored in (without a fragment); matched on toPrefixMatchForm.
    const canonical = canonicalizeTarget(value);
    if (!canonical.ok) {
      return {
        problem: /^[a-z][a-z0-9+.-]*:/i.test(value) ? canonical.problem : 'must be an absolute http(s) URL',
      };
    }
    const hashAt = canonical.url.indexOf('#');
    return hashAt < 0 ? canonical.url : canonical.url.slice(0, hashAt);
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

const UNRESERVED_ESCAPE = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[DdEe]|5[Ff]|7[Ee])/g;

/**
 * The form URL-prefix entries and targets are compared in: canonical (lib/targets/canonical_url.ts), without
 * the fragment, with percent-escapes of unreserved characters decoded (RFC 3986 6.2.2.2: `%62ad` is `bad`) and
 * other escapes in upper case, and without the scheme — the same page over http and https is the same page. So
 * `https://Files.Example.:443/%62ad/x` matches an entry `https://files.example/bad/`. A value with no canonical
 * form is compared as written.
 */
export function toPrefixMatchForm(value: string): string {
  const canonical = canonicalizeTarget(value);
  let url = canonical.ok ? canonical.url : value;
  const hashAt = url.indexOf('#');
  if (hashAt >= 0) url = url.slice(0, hashAt);
  url = url
    .replace(UNRESERVED_ESCAPE, (hex) => String.fromCharCode(Number.parseInt(hex.slice(1), 16)))
    .replace(/%[0-9a-f]{2}/gi, (hex) => hex.toUpperCase());
  return url.replace(/^https?:/i, '');
}

/** The entries among `entries` that match `url` (already parsed). */
export function matchBlocklist(url: URL, entries: readonly BlocklistEntry[]): BlocklistEntry[] {
  const host = getNormalisedHost(url);
  let target: string | undefined;
  return entries.filter((e) => {
    if (e.kind === 'host') return isHostOrSubdomain(host, e.pattern);
    target ??= toPrefixMatchForm(url.href);
    return target.startsWith(toPrefixMatchForm(e.pattern));
  });
}
