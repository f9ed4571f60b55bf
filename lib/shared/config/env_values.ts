// The value kinds settings share (URLs, durations, flags, lists, paths), each failing with a message for people.
import { z } from 'zod';

/** Blank or unset: undefined; otherwise the trimmed string. */
export const optionalString = z
  .string()
  .transform((v) => v.trim())
  .pipe(z.string())
  .optional()
  .transform((v) => (v === '' ? undefined : v));

const httpUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL')
  .transform((v) => v.replace(/\/+$/, ''));

/** An absolute http(s) URL without its trailing slashes; blank or unset: undefined. */
export const optionalHttpUrl = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v))
  .pipe(httpUrl.optional());

/** True for an https URL, or an http one to a loopback address (a test's local fake). */
export function isHttpsOrLoopback(value: string): boolean {
  const url = new URL(value);
  if (url.protocol === 'https:') return true;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return (
    url.protocol === 'http:' && (host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1')
  );
}

/** A Temporal duration: a whole number of minutes, hours or days. */
export const duration = z
  .string()
  .trim()
  .regex(/^[1-9]\d*(m|h|d)$/, 'must be a duration like 30m, 12h or 1d');

export const port = z.coerce.number().int().min(0).max(65535);

/** true/false (also 1/0, yes/no, on/off), any case; anything else names the variable. */
export const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => /^(true|false|1|0|yes|no|on|off)$/.test(v), 'must be true or false')
  .transform((v) => /^(true|1|yes|on)$/.test(v));

/** A comma list, each entry trimmed and lower-cased; unset: empty. */
export const commaList = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );

/** A directory every process agrees on: relative paths would depend on each process's working directory. */
export const absolutePath = z
  .string()
  .regex(/^\//, 'must be an absolute path (e.g. /var/lib/lifeline/escrow)');

/**
 * A value per short domain: `domain=value`, comma-separated (domains lower-cased, values as given, each checked
 * against `value`); unset or blank: an empty map. Which domains may be named is the caller's check (config.ts:
 * SHORT_DOMAINS after the first).
 */
export function perDomainValues(value: RegExp, what: string) {
  return optionalString.transform((v, ctx) => {
    const map = new Map<string, string>();
    for (const entry of (v ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)) {
      const eq = entry.indexOf('=');
      const domain = eq > 0 ? entry.slice(0, eq).trim().toLowerCase() : '';
      const given = eq > 0 ? entry.slice(eq + 1).trim() : '';
      if (!/^[a-z0-9.-]+$/.test(domain) || !value.test(given) || map.has(domain)) {
        ctx.addIssue({
          code: 'custom',
          message: `${entry}: must be short.domain=${what}, each domain once`,
        });
        return z.NEVER;
      }
      map.set(domain, given);
    }
    return map as ReadonlyMap<string, string>;
  });
}
