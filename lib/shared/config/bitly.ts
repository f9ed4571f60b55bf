// Bitly, the vendor replica: credentials, the pull of its click counts, and what an archive backfill may spend.
import { z } from 'zod';
import type { IssueSink } from '../temporal_settings.ts';
import { flag, optionalHttpUrl, optionalString } from './env_values.ts';

export const bitlyEnv = z.object({
  BITLY_TOKEN: optionalString,
  BITLY_DOMAIN: optionalString,
  BITLY_GROUP_GUID: optionalString,
  // Each short domain after the first on its own Bitly branded domain (ADR 0078): `short=bitly[@group]`, commas.
  BITLY_DOMAINS: optionalString.pipe(
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        const map: { shortDomain: string; domain: string; groupGuid: string | undefined }[] = [];
        for (const entry of (v ?? '')
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean)) {
          const m = /^([a-z0-9.-]+)=([a-z0-9.-]+)(?:@([A-Za-z0-9_-]+))?$/i.exec(entry);
          if (!m) {
            ctx.addIssue({
              code: 'custom',
              message: `${entry}: must be short.domain=bitly.domain[@group_guid]`,
            });
            return z.NEVER;
          }
          map.push({ shortDomain: m[1]!.toLowerCase(), domain: m[2]!.toLowerCase(), groupGuid: m[3] });
        }
        return map;
      }),
  ),
  BITLY_API_BASE_URL: optionalHttpUrl.transform((v) => v ?? 'https://api-ssl.bitly.com'),
  BITLY_CLICKS_INTERVAL: z
    .string()
    .trim()
    .regex(/^(off|[1-9]\d*(m|h|d))$/, 'must be a duration like 30m, 6h or 1d, or off')
    .default('6h'),
  BITLY_CLICKS_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  // Archive (backfilled) links served in-house only: never created on Bitly (docs/PUBLISHING.md).
  ARCHIVE_LINKS_IN_HOUSE: flag.default(false),
  // The Bitly plan's monthly limit on new links, for the backfill dry run when Bitly's plan limits cannot be read.
  BITLY_MONTHLY_CREATE_LIMIT: optionalString
    .refine((v) => v === undefined || /^\d{1,9}$/.test(v), 'must be a whole number of links (0 or more)')
    .transform((v) => (v === undefined ? undefined : Number(v))),
});

type BitlyEnv = z.infer<typeof bitlyEnv>;

export function refineBitlyEnv(env: BitlyEnv, ctx: IssueSink): void {
  const bitlyDomains = (env.BITLY_DOMAINS ?? []).map((m) => m.domain);
  if (env.BITLY_DOMAIN) bitlyDomains.push(env.BITLY_DOMAIN.toLowerCase());
  if (new Set(bitlyDomains).size !== bitlyDomains.length) {
    // Two short domains on one Bitly domain would share its back-halves: a code free on one is taken on the other.
    ctx.addIssue({
      code: 'custom',
      path: ['BITLY_DOMAINS'],
      message: 'must give each short domain its own Bitly domain (and not BITLY_DOMAIN again)',
    });
  }
  if (env.BITLY_TOKEN && !env.BITLY_DOMAIN) {
    ctx.addIssue({
      code: 'custom',
      path: ['BITLY_DOMAIN'],
      message: 'is required when BITLY_TOKEN is set',
    });
  }
  if (env.BITLY_TOKEN && !env.BITLY_GROUP_GUID) {
    ctx.addIssue({
      code: 'custom',
      path: ['BITLY_GROUP_GUID'],
      message: 'is required when BITLY_TOKEN is set',
    });
  }
}

export interface BitlyConfig {
  bitly: { token: string; domain: string; groupGuid: string; apiBaseUrl: string } | undefined;
  /**
   * The Bitly branded domain (and group, else BITLY_GROUP_GUID's) of each short domain after the first
   * (BITLY_DOMAINS), by short domain; a short domain without one is never put on Bitly (ADR 0078).
   */
  bitlyDomains: ReadonlyMap<string, { domain: string; groupGuid: string }>;
  /**
   * The pull of Bitly's per-day click counts (BITLY_CLICKS_INTERVAL, BITLY_CLICKS_DAYS): undefined when Bitly is
   * not configured or the interval is `off`.
   */
  bitlyClicks: { interval: string; days: number } | undefined;
  /**
   * What an archive backfill may spend on Bitly: `archiveLinksInHouse` (ARCHIVE_LINKS_IN_HOUSE) keeps backfilled
   * links off Bitly; `monthlyCreateLimit` (BITLY_MONTHLY_CREATE_LIMIT) is the plan's monthly link limit when
   * Bitly's own plan limits cannot be read.
   */
  bitlyBudget: { archiveLinksInHouse: boolean; monthlyCreateLimit: number | undefined };
}

export function bitlyConfig(e: BitlyEnv): BitlyConfig {
  return {
    bitly:
      e.BITLY_TOKEN && e.BITLY_DOMAIN && e.BITLY_GROUP_GUID
        ? {
            token: e.BITLY_TOKEN,
            domain: e.BITLY_DOMAIN,
            groupGuid: e.BITLY_GROUP_GUID,
            apiBaseUrl: e.BITLY_API_BASE_URL,
          }
        : undefined,
    bitlyDomains: new Map(
      (e.BITLY_DOMAINS ?? []).map((m): [string, { domain: string; groupGuid: string }] => [
        m.shortDomain,
        { domain: m.domain, groupGuid: m.groupGuid ?? e.BITLY_GROUP_GUID ?? '' },
      ]),
    ),
    bitlyClicks:
      e.BITLY_TOKEN && e.BITLY_DOMAIN && e.BITLY_GROUP_GUID && e.BITLY_CLICKS_INTERVAL !== 'off'
        ? { interval: e.BITLY_CLICKS_INTERVAL, days: e.BITLY_CLICKS_DAYS }
        : undefined,
    bitlyBudget: {
      archiveLinksInHouse: e.ARCHIVE_LINKS_IN_HOUSE,
      monthlyCreateLimit: e.BITLY_MONTHLY_CREATE_LIMIT,
    },
  };
}
