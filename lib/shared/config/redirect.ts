// The answer to `GET /{code}`: the lookup ladder's caches and deadline, the status, headers and query it carries.
import { z } from 'zod';
import { optionalHttpUrl, optionalString } from './env_values.ts';

const REDIRECT_STATUSES = [301, 302, 307, 308] as const;
export type RedirectStatus = (typeof REDIRECT_STATUSES)[number];

export const redirectEnv = z.object({
  RESOLVER_CACHE_MAX: z.coerce.number().int().min(0).max(10_000_000).default(100_000),
  // 48 MiB of estimated records (~54,000 links of a typical target) across every short domain: with the heap
  // bounded by the web script's flags, a process stays within 400 MiB of RSS at any miss rate, so within a
  // 512 MiB container (ADR 0085; 64 MiB ended the million-link random-miss run at 404 MiB).
  RESOLVER_CACHE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(8 * 1024 ** 3)
    .default(48 * 1024 ** 2),
  RESOLVER_CACHE_TTL_MS: z.coerce.number().int().min(1).max(86_400_000).default(60_000),
  RESOLVER_NEGATIVE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(5_000),
  // 30 s: longer than a refresh's worst case (a Postgres lookup's 3 s deadline, then a late store read's 1 s),
  // and with the default TTL a copy that missed its invalidation is at most 90 s old, the browser max-age of
  // REDIRECT_CACHE_CONTROL's default (docs/REDIRECTS.md, "Stale while revalidate").
  RESOLVER_STALE_MAX_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  SERVING_STORE_TIMEOUT_MS: z.coerce.number().int().min(1).max(10_000).default(50),
  REDIRECT_STATUS: z.coerce
    .number()
    .refine((n): n is RedirectStatus => (REDIRECT_STATUSES as readonly number[]).includes(n), {
      message: 'must be one of 301, 302, 307, 308',
    })
    .default(301),
  REDIRECT_CACHE_CONTROL: z
    .string()
    .trim()
    .min(1)
    .refine((v) => !/[\r\n]/.test(v), 'must be a single header line')
    .default('private, max-age=90'),
  UTM_PARAMS: optionalString.pipe(
    z
      .string()
      .refine((v) => {
        const p = new URLSearchParams(v);
        return [...p.keys()].length > 0 && [...p.keys()].every((k) => k.length > 0);
      }, 'must be a query string like utm_source=short&utm_medium=social')
      .optional(),
  ),
  FORWARD_QUERY_PARAMS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .refine((names) => names.every((n) => /^[A-Za-z0-9_.-]{1,64}$/.test(n) && n !== 'qr'), {
      message: 'must be a comma list of query parameter names (letters, digits, "_", ".", "-"; not qr)',
    }),
  ROOT_REDIRECT_URL: optionalHttpUrl,
  TRUSTED_COUNTRY_HEADER: optionalString.transform((v) => v?.toLowerCase()),
  // A link switched to its archived copy (dead destination, policy `fallback`): our page naming the archived
  // copy and the original URL, or a 302 straight to the copy.
  DEAD_FALLBACK_ANSWER: z.enum(['page', 'redirect'], { message: 'must be page or redirect' }).default('page'),
});

export interface RedirectConfig {
  /**
   * The redirect lookup ladder: in-process LRU entries (0 disables it) and their TTL, the TTL of "no such
   * code" answers, how long past its TTL a record may still be served while one refresh runs (0: never), and
   * how long a serving-store read may take before falling through to Postgres.
   */
  resolver: {
    cacheMax: number;
    /** Estimated bytes the LRUs of every short domain hold together at most (0: entries only). */
    cacheMaxBytes: number;
    cacheTtlMs: number;
    negativeTtlMs: number;
    staleMaxMs: number;
    servingStoreTimeoutMs: number;
  };
  redirect: {
    status: RedirectStatus;
    cacheControl: string;
    utmParams: string | undefined;
    /** Request query parameters forwarded to targets (FORWARD_QUERY_PARAMS); empty: none. */
    forwardQueryParams: string[];
    /** How a link switched to its archived copy answers (DEAD_FALLBACK_ANSWER). */
    fallbackAnswer: 'page' | 'redirect';
  };
  rootRedirectUrl: string | undefined;
  trustedCountryHeader: string | undefined;
}

export function redirectConfig(e: z.infer<typeof redirectEnv>): RedirectConfig {
  return {
    resolver: {
      cacheMax: e.RESOLVER_CACHE_MAX,
      cacheMaxBytes: e.RESOLVER_CACHE_MAX_BYTES,
      cacheTtlMs: e.RESOLVER_CACHE_TTL_MS,
      negativeTtlMs: e.RESOLVER_NEGATIVE_TTL_MS,
      staleMaxMs: e.RESOLVER_STALE_MAX_MS,
      servingStoreTimeoutMs: e.SERVING_STORE_TIMEOUT_MS,
    },
    redirect: {
      status: e.REDIRECT_STATUS as RedirectStatus,
      cacheControl: e.REDIRECT_CACHE_CONTROL,
      utmParams: e.UTM_PARAMS,
      forwardQueryParams: e.FORWARD_QUERY_PARAMS,
      fallbackAnswer: e.DEAD_FALLBACK_ANSWER,
    },
    rootRedirectUrl: e.ROOT_REDIRECT_URL,
    trustedCountryHeader: e.TRUSTED_COUNTRY_HEADER,
  };
}
