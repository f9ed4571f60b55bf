import { z } from 'zod';
import { type OutgoingRule, parseAllowanceEntry } from './outgoing_request.ts';
import { refineTemporalSettings, type TemporalSettings, temporalEnvShape } from './temporal_settings.ts';

/** Codes and aliases: letters, digits, '-' and '_' (Bitly's back-half rules), case-sensitive. */
export const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const REDIRECT_STATUSES = [301, 302, 307, 308] as const;
export type RedirectStatus = (typeof REDIRECT_STATUSES)[number];

const optionalString = z
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

const optionalHttpUrl = z
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

// A Temporal duration: a whole number of minutes, hours or days.
const duration = z
  .string()
  .trim()
  .regex(/^[1-9]\d*(m|h|d)$/, 'must be a duration like 30m, 12h or 1d');

const port = z.coerce.number().int().min(0).max(65535);

// true/false (also 1/0, yes/no, on/off), any case; anything else names the variable.
const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => /^(true|false|1|0|yes|no|on|off)$/.test(v), 'must be true or false')
  .transform((v) => /^(true|1|yes|on)$/.test(v));

const commaList = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );

/** Formats of the static last-resort snapshot (`npm run snapshot -- --format …`, SNAPSHOT_FORMATS). */
export const SNAPSHOT_FORMATS = ['nginx', 'redirects', 'json'] as const;
export type SnapshotFormat = (typeof SNAPSHOT_FORMATS)[number];
/** CDNs whose caches a link change purges (CDN_PURGE_PROVIDER). */
export const CDN_PURGE_PROVIDERS = ['webhook', 'cloudflare', 'cloudfront'] as const;
export type CdnPurgeProvider = (typeof CDN_PURGE_PROVIDERS)[number];

// A directory every process agrees on: relative paths would depend on each process's working directory.
const absolutePath = z.string().regex(/^\//, 'must be an absolute path (e.g. /var/lib/lifeline/escrow)');

/** One schema over every environment name in API.md; parsed once at start-up and passed down. */
export const envSchema = z
  .object({
    PORT: port.default(8000),
    HOST: z.string().default('0.0.0.0'),
    WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
    // Webhook and backfill bodies being read at once, per web process: at least one backfill batch (4 MiB) must fit.
    WEBHOOK_BODIES_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(4 * 1024 * 1024, 'must be at least 4194304 (one 4 MiB backfill batch)')
      .max(1024 * 1024 * 1024, 'must be at most 1 GiB')
      .default(16 * 1024 * 1024),
    SHORT_BASE_URL: optionalHttpUrl,
    APP_BASE_URL: optionalHttpUrl,
    DATABASE_URL: optionalString.pipe(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
        .optional(),
    ),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
    REDIS_URL: optionalString.pipe(
      z
        .string()
        .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
        .optional(),
    ),
    REDIS_KEY_PREFIX: z.string().default('lifeline:'),
    UPSTASH_REDIS_REST_URL: optionalHttpUrl,
    UPSTASH_REDIS_REST_TOKEN: optionalString,
    RESOLVER_CACHE_MAX: z.coerce.number().int().min(0).max(10_000_000).default(100_000),
    RESOLVER_CACHE_TTL_MS: z.coerce.number().int().min(1).max(86_400_000).default(60_000),
    RESOLVER_NEGATIVE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(5_000),
    SERVING_STORE_TIMEOUT_MS: z.coerce.number().int().min(1).max(10_000).default(50),
    // TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS / mTLS, API key, profile file (lib/shared/temporal_settings.ts).
    ...temporalEnvShape,
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('lifeline'),
    TEMPORAL_UI_URL: optionalHttpUrl,
    BITLY_TOKEN: optionalString,
    BITLY_DOMAIN: optionalString,
    BITLY_GROUP_GUID: optionalString,
    BITLY_API_BASE_URL: optionalHttpUrl.transform((v) => v ?? 'https://api-ssl.bitly.com'),
    SAFE_BROWSING_API_KEY: optionalString,
    SAFE_BROWSING_API_BASE_URL: optionalHttpUrl.transform((v) => v ?? 'https://safebrowsing.googleapis.com'),
    SAFETY_TRUSTED_HOSTS: commaList,
    SAFETY_RESCAN_INTERVAL: duration.default('12h'),
    RECONCILE_INTERVAL: duration.default('1d'),
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
    DNS_ADAPTER_URL: optionalHttpUrl,
    DNS_ADAPTER_TOKEN: optionalString,
    FAILOVER_DNS_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(60, 'must be at least 60 (DNS providers and resolvers ignore or refuse shorter TTLs)')
      .max(86_400)
      .default(300),
    WORDPRESS_WEBHOOK_SECRET: optionalString.pipe(
      z.string().min(16, 'must be at least 16 characters').optional(),
    ),
    BOOTSTRAP_API_KEY: optionalString.pipe(z.string().min(20, 'must be at least 20 characters').optional()),
    ADMIN_EMAIL: optionalString.pipe(z.email('must be an email address').optional()),
    ADMIN_PASSWORD: optionalString.pipe(
      z
        .string()
        .min(10, 'must be at least 10 characters')
        // lib/auth/passwords.ts PASSWORD_MAX_BYTES: a longer password could never sign in.
        .refine((v) => Buffer.byteLength(v, 'utf8') <= 1024, 'must be at most 1,024 bytes (UTF-8)')
        .optional(),
    ),
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
    CLICK_FLUSH_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
    CLICK_FLUSH_MAX_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    CLICK_BUFFER_MAX_KEYS: z.coerce.number().int().min(100).max(10_000_000).default(250_000),
    SYNC_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(200),
    ALLOWED_TARGET_HOSTS: commaList,
    CODE_LENGTH: z.coerce.number().int().min(5).max(12).default(6),
    ROOT_REDIRECT_URL: optionalHttpUrl,
    TRUSTED_COUNTRY_HEADER: optionalString.transform((v) => v?.toLowerCase()),
    TRUSTED_CLIENT_IP_HEADER: optionalString.transform((v) => v?.toLowerCase()),
    RATE_LIMIT_CREATE_PER_MINUTE: z.coerce.number().int().min(1).default(2000),
    RATE_LIMIT_LOGIN_PER_ACCOUNT: z.coerce.number().int().min(1).default(10),
    RATE_LIMIT_LOGIN_PER_IP: z.coerce.number().int().min(1).default(50),
    RATE_LIMIT_REPORTS_PER_HOUR: z.coerce.number().int().min(1).default(20),
    LIFELINE_DATA_DIR: optionalString,
    LOGIN_HASH_QUEUE_MAX: z.coerce
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1 (sign-ins waiting for a password hash per web process)')
      .max(1000, 'must be at most 1000 (each waiting sign-in may wait up to 10 s)')
      .default(8),
    LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    // GA4 Measurement Protocol forwarding of clicks (lib/analytics); off unless both id and secret are set.
    GA4_MEASUREMENT_ID: optionalString.pipe(
      z
        .string()
        .regex(/^G-[A-Z0-9]{4,20}$/, 'must be a web stream measurement id like G-XXXXXXXXXX')
        .optional(),
    ),
    GA4_API_SECRET: optionalString.pipe(
      z
        .string()
        .regex(/^\S{1,200}$/, 'must be a Measurement Protocol API secret (no spaces)')
        .optional(),
    ),
    GA4_ENDPOINT: optionalHttpUrl
      .transform((v) => v ?? 'https://www.google-analytics.com')
      .refine(isHttpsOrLoopback, 'must be an https URL (plain http only to a loopback address, for tests)'),
    GA4_INCLUDE_QR: flag.default(true),
    GA4_QUEUE_MAX: z.coerce.number().int().min(25).max(1_000_000).default(10_000),
    RETARGET_REQUIRES_SECOND_ADMIN: flag.default(false),
    WORDPRESS_REST_URLS: z
      .string()
      .optional()
      .transform((v, ctx) => {
        const out: Record<string, string> = {};
        for (const entry of (v ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)) {
          const eq = entry.indexOf('=');
          const site = entry.slice(0, eq).trim();
          const url = entry.slice(eq + 1).trim();
          let ok = eq > 0 && /^[A-Za-z0-9._-]{1,100}$/.test(site);
          try {
            ok = ok && ['http:', 'https:'].includes(new URL(url).protocol);
          } catch {
            ok = false;
          }
          if (!ok) {
            ctx.addIssue({
              code: 'custom',
              message: `must be a comma list of site=restUrl (e.g. news=https://news.example/wp-json/lifeline/v1/); "${entry}" is not`,
            });
            return z.NEVER;
          }
          out[site] = url.endsWith('/') || url.includes('?') ? url : `${url}/`;
        }
        return out;
      }),
    // The breaker on mass change by WordPress (ADR 0057): a share of a site's links, and a floor.
    WORDPRESS_BREAKER_SHARE: z.coerce
      .number({ message: 'must be a share between 0 and 1 (0.02 is 2%)' })
      .min(0, 'must be a share between 0 and 1 (0.02 is 2%)')
      .max(1, 'must be a share between 0 and 1 (0.02 is 2%)')
      .default(0.02),
    WORDPRESS_BREAKER_MIN: z.coerce
      .number({ message: 'must be a whole number of links (0 or more)' })
      .int('must be a whole number of links (0 or more)')
      .min(0, 'must be a whole number of links (0 or more)')
      .max(100_000_000)
      .default(50),
    // Links that outlive us: the DNS TTL a planned switch lowers to first; escrow exports; static snapshots; CDN purge.
    FAILOVER_DNS_LOWERED_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(60, 'must be at least 60 (DNS providers and resolvers ignore or refuse shorter TTLs)')
      .max(3_600)
      .default(60),
    ESCROW_INTERVAL: optionalString.pipe(duration.optional()),
    ESCROW_DIR: optionalString.pipe(absolutePath.optional()),
    ESCROW_KEEP: z.coerce.number().int().min(1).max(1_000).default(7),
    // Signs each export's manifest (HMAC-SHA256) and makes a restore refuse one that is unsigned or tampered.
    ESCROW_SIGNING_KEY: optionalString.pipe(
      z
        .string()
        .min(32, 'must be at least 32 characters (e.g. `openssl rand -base64 48`)')
        .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
        .optional(),
    ),
    SNAPSHOT_INTERVAL: optionalString.pipe(duration.optional()),
    SNAPSHOT_DIR: optionalString.pipe(absolutePath.optional()),
    SNAPSHOT_FORMATS: z
      .string()
      .optional()
      .transform((v) => [...new Set((v ?? SNAPSHOT_FORMATS.join(',')).split(',').map((s) => s.trim()))])
      .refine(
        (formats) =>
          formats.length > 0 && formats.every((f) => (SNAPSHOT_FORMATS as readonly string[]).includes(f)),
        { message: `must be a comma list of ${SNAPSHOT_FORMATS.join(', ')}` },
      )
      .transform((formats) => formats as SnapshotFormat[]),
    SNAPSHOT_KEEP: z.coerce.number().int().min(1).max(100).default(3),
    CDN_PURGE_PROVIDER: optionalString.pipe(z.enum(CDN_PURGE_PROVIDERS).optional()),
    CDN_PURGE_WEBHOOK_URL: optionalHttpUrl,
    CDN_PURGE_WEBHOOK_SECRET: optionalString.pipe(
      z.string().min(16, 'must be at least 16 characters').optional(),
    ),
    CDN_PURGE_CLOUDFLARE_ZONE_ID: optionalString.pipe(
      z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be the zone id (32 hex characters)')
        .optional(),
    ),
    CDN_PURGE_CLOUDFLARE_API_TOKEN: optionalString.pipe(
      z
        .string()
        .regex(/^[\x21-\x7e]+$/, 'must be an API token (printable characters, no spaces)')
        .optional(),
    ),
    CDN_PURGE_CLOUDFLARE_API_BASE_URL: optionalHttpUrl,
    CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID: optionalString.pipe(
      z
        .string()
        .regex(/^[A-Z0-9]{1,64}$/, 'must be a distribution id like EDFDVBD6EXAMPLE')
        .optional(),
    ),
    CDN_PURGE_AWS_ACCESS_KEY_ID: optionalString,
    CDN_PURGE_AWS_SECRET_ACCESS_KEY: optionalString,
    CDN_PURGE_AWS_SESSION_TOKEN: optionalString,
    CDN_PURGE_CLOUDFRONT_API_BASE_URL: optionalHttpUrl,
    WORKER_HEALTH_PORT: port.default(9464),
    WORKER_HEALTH_HOST: z.string().trim().min(1).default('0.0.0.0'),
    SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(120_000).default(5_000),
    METRICS_TOKEN: optionalString.pipe(
      z
        .string()
        .min(16, 'must be at least 16 characters')
        .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
        .optional(),
    ),
    RATE_LIMIT_CREATE_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(600),
    RATE_LIMIT_SAFETY_CHECKS_PER_MINUTE: z.coerce.number().int().min(1).default(120),
    REPORT_WEBHOOK_URL: optionalHttpUrl,
    // Private addresses or hosts server-side requests to configured URLs may reach (docs/adr/0058-outgoing-requests-rule.md).
    OUTGOING_ALLOWED_PRIVATE: commaList.superRefine((entries, ctx) => {
      for (const entry of entries) {
        if (!parseAllowanceEntry(entry)) {
          ctx.addIssue({
            code: 'custom',
            message: `must be a comma list of host names, IP addresses and CIDR ranges (e.g. hooks.internal,10.20.0.0/16); "${entry}" is none`,
          });
        }
      }
    }),
    REPORT_WEBHOOK_SECRET: optionalString.pipe(
      z.string().min(16, 'must be at least 16 characters').optional(),
    ),
  })
  .superRefine((env, ctx) => {
    refineTemporalSettings(env, ctx);
    if (env.UPSTASH_REDIS_REST_URL && !env.UPSTASH_REDIS_REST_TOKEN) {
      ctx.addIssue({
        code: 'custom',
        path: ['UPSTASH_REDIS_REST_TOKEN'],
        message: 'is required when UPSTASH_REDIS_REST_URL is set',
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
    if (env.GA4_MEASUREMENT_ID && !env.GA4_API_SECRET) {
      ctx.addIssue({
        code: 'custom',
        path: ['GA4_API_SECRET'],
        message: 'is required when GA4_MEASUREMENT_ID is set',
      });
    }
    if (env.GA4_API_SECRET && !env.GA4_MEASUREMENT_ID) {
      ctx.addIssue({
        code: 'custom',
        path: ['GA4_MEASUREMENT_ID'],
        message: 'is required when GA4_API_SECRET is set',
      });
    }
    if (env.ADMIN_PASSWORD && !env.ADMIN_EMAIL) {
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_EMAIL'],
        message: 'is required when ADMIN_PASSWORD is set',
      });
    }
    if (env.FAILOVER_DNS_LOWERED_TTL_SECONDS >= env.FAILOVER_DNS_TTL_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        path: ['FAILOVER_DNS_LOWERED_TTL_SECONDS'],
        message: `must be below FAILOVER_DNS_TTL_SECONDS (${env.FAILOVER_DNS_TTL_SECONDS})`,
      });
    }
    if (env.ESCROW_INTERVAL && !env.ESCROW_DIR) {
      ctx.addIssue({
        code: 'custom',
        path: ['ESCROW_DIR'],
        message: 'is required when ESCROW_INTERVAL is set',
      });
    }
    if (env.SNAPSHOT_INTERVAL && !env.SNAPSHOT_DIR) {
      ctx.addIssue({
        code: 'custom',
        path: ['SNAPSHOT_DIR'],
        message: 'is required when SNAPSHOT_INTERVAL is set',
      });
    }
    const required: Record<CdnPurgeProvider, (keyof typeof env)[]> = {
      webhook: ['CDN_PURGE_WEBHOOK_URL', 'CDN_PURGE_WEBHOOK_SECRET'],
      cloudflare: ['CDN_PURGE_CLOUDFLARE_ZONE_ID', 'CDN_PURGE_CLOUDFLARE_API_TOKEN'],
      cloudfront: [
        'CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID',
        'CDN_PURGE_AWS_ACCESS_KEY_ID',
        'CDN_PURGE_AWS_SECRET_ACCESS_KEY',
      ],
    };
    if (env.CDN_PURGE_PROVIDER) {
      for (const name of required[env.CDN_PURGE_PROVIDER]) {
        if (!env[name]) {
          ctx.addIssue({
            code: 'custom',
            path: [name],
            message: `is required when CDN_PURGE_PROVIDER is ${env.CDN_PURGE_PROVIDER}`,
          });
        }
      }
    }
  });

export type Env = z.infer<typeof envSchema>;

/** The parsed configuration every part of the product receives. */
export interface Config {
  port: number;
  host: string;
  /**
   * `npm run web` processes sharing the port (WEB_CONCURRENCY, default 1): each with its own LRU, all on the
   * one invalidation bus (server/web_cluster.ts, ADR 0023). Other entries ignore it.
   */
  webConcurrency: number;
  /**
   * Bytes of webhook and backfill bodies one web process reads at once (WEBHOOK_BODIES_MAX_BYTES); a delivery
   * beyond it is answered 503 + Retry-After, which the plugin's outbox retries.
   */
  webhookBodiesMaxBytes: number;
  /** Public base of short links, without a trailing slash. */
  shortBaseUrl: string;
  /** Base of the UI and API, without a trailing slash. */
  appBaseUrl: string;
  /** True when the short host and the app host differ: each serves only its own routes. */
  splitHosts: boolean;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  redis:
    | { kind: 'tcp'; url: string; keyPrefix: string }
    | { kind: 'upstash'; url: string; token: string; keyPrefix: string }
    | undefined;
  /**
   * The redirect lookup ladder: in-process LRU entries (0 disables it) and their TTL, the TTL of "no such
   * code" answers, and how long a serving-store read may take before falling through to Postgres.
   */
  resolver: { cacheMax: number; cacheTtlMs: number; negativeTtlMs: number; servingStoreTimeoutMs: number };
  /**
   * Temporal: `address` and `namespace` as the environment gives them (TEMPORAL_ADDRESS unset: undefined); a
   * profile file may still name others, so processes connect with what boot/temporal_connection.ts resolves
   * from `settings` (every TEMPORAL_* variable, validated) and use its namespace.
   */
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    uiUrl: string | undefined;
    settings: TemporalSettings;
  };
  bitly: { token: string; domain: string; groupGuid: string; apiBaseUrl: string } | undefined;
  safeBrowsing: { apiKey: string; apiBaseUrl: string } | undefined;
  /** Hosts exempt from the safety rules (the newsroom's own), and how often every destination is re-checked. */
  safety: { trustedHosts: string[]; rescanInterval: string };
  /** Reconciliation schedule and vendor failover: the optional DNS adapter and the short domain's DNS TTL. */
  lifecycle: {
    reconcileInterval: string;
    dnsAdapter: { url: string; token: string | undefined } | undefined;
    dnsTtlSeconds: number;
    /** The TTL a planned switch lowers the short domain to before switching (FAILOVER_DNS_LOWERED_TTL_SECONDS). */
    dnsLoweredTtlSeconds: number;
  };
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
  wordpressWebhookSecret: string | undefined;
  bootstrapApiKey: string | undefined;
  admin: { email: string; password: string | undefined } | undefined;
  redirect: {
    status: RedirectStatus;
    cacheControl: string;
    utmParams: string | undefined;
    /** Request query parameters forwarded to targets (FORWARD_QUERY_PARAMS); empty: none. */
    forwardQueryParams: string[];
  };
  /**
   * The click buffer: how often it is written to click_counts (the interval, stretched by long flushes up to the
   * maximum, never below the interval), and how many distinct aggregates it holds.
   */
  clicks: { flushIntervalMs: number; maxFlushIntervalMs: number; maxKeys: number };
  /** The sync queue of bulk changes (ADR 0024): codes per batch the drainer syncs at once (SYNC_BATCH_SIZE). */
  syncQueue: { batchSize: number };
  allowedTargetHosts: string[];
  codeLength: number;
  rootRedirectUrl: string | undefined;
  trustedCountryHeader: string | undefined;
  /** CDN/proxy header carrying the client IP (login rate limits); unset: the socket address. */
  trustedClientIpHeader: string | undefined;
  /** Links created per minute per API key or user; failed logins per 15 minutes per account and per IP. */
  rateLimits: {
    createPerMinute: number;
    loginPerAccount: number;
    loginPerIp: number;
    /** Reader reports (POST /{code}/report) per client IP per hour. */
    reportsPerHour: number;
    /** Links created per minute from one client IP by UI sessions, whoever is signed in. */
    createPerIpPerMinute: number;
    /** POST /api/v1/safety/check calls per minute per API key (each may spend Safe Browsing quota). */
    safetyChecksPerMinute: number;
  };
  /**
   * Sign-ins waiting for a password hash per web process, at most (two hash at once); beyond it, and for a
   * second attempt from a network that has one waiting, 503 + Retry-After (lib/auth/hash_slots.ts).
   */
  loginHashQueueMax: number;
  /**
   * Where first-run credentials are written (and `npm start` keeps its embedded state): LIFELINE_DATA_DIR, or
   * unset for `.data` in the checkout (boot/first_run_credentials.ts).
   */
  dataDir: string | undefined;
  logLevel: Env['LOG_LEVEL'];
  /** Mass retargets: with `requiresSecondAdmin`, the one who asked for a run may not approve it. */
  retarget: { requiresSecondAdmin: boolean };
  /**
   * GA4 Measurement Protocol forwarding of human clicks (and QR scans unless `includeQr` is false), from the
   * click buffer's flushes; undefined when GA4_MEASUREMENT_ID and GA4_API_SECRET are not set.
   */
  ga4:
    | {
        measurementId: string;
        apiSecret: string;
        endpoint: string;
        includeQr: boolean;
        /** Clicks waiting to be sent, at most; beyond it they are dropped and counted. */
        maxQueue: number;
      }
    | undefined;
  /** WORDPRESS_REST_URLS: each site's signed-listing base, overriding the restUrl its events carry. */
  wordpressRestUrls: Record<string, string>;
  /**
   * WORDPRESS_BREAKER_SHARE / WORDPRESS_BREAKER_MIN: most of a site's links a WordPress path may retarget or
   * make gone in one run or hour without an admin's approval: max(share × the site's links, min).
   */
  wordpressBreaker: { share: number; min: number };
  /**
   * Escrow exports (lib/escrow): the Schedule's interval (undefined: off), the directory it writes
   * `lifeline-escrow-<time>/` folders to (also where the ops page finds the latest), and how many it keeps.
   */
  escrow: {
    interval: string | undefined;
    dir: string | undefined;
    keep: number;
    /** ESCROW_SIGNING_KEY: signs each export's manifest; a restore with it set refuses unsigned or tampered ones. */
    signingKey: string | undefined;
  };
  /** Static last-resort snapshots (lib/snapshot): interval (undefined: off), directory, formats, how many kept. */
  snapshot: {
    interval: string | undefined;
    dir: string | undefined;
    formats: SnapshotFormat[];
    keep: number;
  };
  /** The CDN purged when a link changes (CDN_PURGE_PROVIDER); undefined: none. Secrets never logged. */
  cdn:
    | { provider: 'webhook'; url: string; secret: string }
    | { provider: 'cloudflare'; zoneId: string; apiToken: string; apiBaseUrl: string | undefined }
    | {
        provider: 'cloudfront';
        distributionId: string;
        credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
        apiBaseUrl: string | undefined;
      }
    | undefined;
  /** The worker's own HTTP port: /livez, /readyz and /metrics (its Node and Temporal SDK metrics). 0: any free port. */
  workerHealth: { port: number; host: string };
  /** After SIGTERM, how long a web instance keeps serving with /readyz at 503 before it stops accepting. */
  shutdownDelayMs: number;
  /** Bearer token GET /metrics requires (METRICS_TOKEN); unset: /metrics is not served. */
  metricsToken: string | undefined;
  /** Where reader reports are announced (REPORT_WEBHOOK_URL), signed with REPORT_WEBHOOK_SECRET if set. */
  reportWebhook: { url: string; secret: string | undefined } | undefined;
  /**
   * The rule for server-side requests to configured or received URLs (WordPress listings, the report, CDN and
   * DNS webhooks): OUTGOING_ALLOWED_PRIVATE, the private hosts and ranges they may reach all the same.
   */
  outgoing: OutgoingRule;
}

/** A configuration error names every offending variable; start-up stops on it. */
export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(
      `Invalid configuration:\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}\n` +
        'Fix the environment variable(s) above and start again.',
    );
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; throws ConfigError naming each bad variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => ({
        variable: String(i.path[0] ?? '(environment)'),
        message: i.message,
      })),
    );
  }
  const e = parsed.data;
  const shortBaseUrl = e.SHORT_BASE_URL ?? `http://127.0.0.1:${e.PORT}`;
  const appBaseUrl = e.APP_BASE_URL ?? shortBaseUrl;
  const redis = e.REDIS_URL
    ? { kind: 'tcp' as const, url: e.REDIS_URL, keyPrefix: e.REDIS_KEY_PREFIX }
    : e.UPSTASH_REDIS_REST_URL && e.UPSTASH_REDIS_REST_TOKEN
      ? {
          kind: 'upstash' as const,
          url: e.UPSTASH_REDIS_REST_URL,
          token: e.UPSTASH_REDIS_REST_TOKEN,
          keyPrefix: e.REDIS_KEY_PREFIX,
        }
      : undefined;
  return {
    port: e.PORT,
    host: e.HOST,
    webConcurrency: e.WEB_CONCURRENCY,
    webhookBodiesMaxBytes: e.WEBHOOK_BODIES_MAX_BYTES,
    shortBaseUrl,
    appBaseUrl,
    splitHosts: new URL(shortBaseUrl).host !== new URL(appBaseUrl).host,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    redis,
    resolver: {
      cacheMax: e.RESOLVER_CACHE_MAX,
      cacheTtlMs: e.RESOLVER_CACHE_TTL_MS,
      negativeTtlMs: e.RESOLVER_NEGATIVE_TTL_MS,
      servingStoreTimeoutMs: e.SERVING_STORE_TIMEOUT_MS,
    },
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      uiUrl: e.TEMPORAL_UI_URL,
      settings: Object.fromEntries(
        Object.keys(temporalEnvShape).map((name) => [name, e[name as keyof typeof temporalEnvShape]]),
      ) as TemporalSettings,
    },
    bitly:
      e.BITLY_TOKEN && e.BITLY_DOMAIN && e.BITLY_GROUP_GUID
        ? {
            token: e.BITLY_TOKEN,
            domain: e.BITLY_DOMAIN,
            groupGuid: e.BITLY_GROUP_GUID,
            apiBaseUrl: e.BITLY_API_BASE_URL,
          }
        : undefined,
    safeBrowsing: e.SAFE_BROWSING_API_KEY
      ? { apiKey: e.SAFE_BROWSING_API_KEY, apiBaseUrl: e.SAFE_BROWSING_API_BASE_URL }
      : undefined,
    safety: { trustedHosts: e.SAFETY_TRUSTED_HOSTS, rescanInterval: e.SAFETY_RESCAN_INTERVAL },
    lifecycle: {
      reconcileInterval: e.RECONCILE_INTERVAL,
      dnsAdapter: e.DNS_ADAPTER_URL ? { url: e.DNS_ADAPTER_URL, token: e.DNS_ADAPTER_TOKEN } : undefined,
      dnsTtlSeconds: e.FAILOVER_DNS_TTL_SECONDS,
      dnsLoweredTtlSeconds: e.FAILOVER_DNS_LOWERED_TTL_SECONDS,
    },
    bitlyClicks:
      e.BITLY_TOKEN && e.BITLY_DOMAIN && e.BITLY_GROUP_GUID && e.BITLY_CLICKS_INTERVAL !== 'off'
        ? { interval: e.BITLY_CLICKS_INTERVAL, days: e.BITLY_CLICKS_DAYS }
        : undefined,
    bitlyBudget: {
      archiveLinksInHouse: e.ARCHIVE_LINKS_IN_HOUSE,
      monthlyCreateLimit: e.BITLY_MONTHLY_CREATE_LIMIT,
    },
    wordpressWebhookSecret: e.WORDPRESS_WEBHOOK_SECRET,
    bootstrapApiKey: e.BOOTSTRAP_API_KEY,
    admin: e.ADMIN_EMAIL ? { email: e.ADMIN_EMAIL.toLowerCase(), password: e.ADMIN_PASSWORD } : undefined,
    redirect: {
      status: e.REDIRECT_STATUS as RedirectStatus,
      cacheControl: e.REDIRECT_CACHE_CONTROL,
      utmParams: e.UTM_PARAMS,
      forwardQueryParams: e.FORWARD_QUERY_PARAMS,
    },
    clicks: {
      flushIntervalMs: e.CLICK_FLUSH_INTERVAL_MS,
      maxFlushIntervalMs: Math.max(e.CLICK_FLUSH_INTERVAL_MS, e.CLICK_FLUSH_MAX_INTERVAL_MS),
      maxKeys: e.CLICK_BUFFER_MAX_KEYS,
    },
    syncQueue: { batchSize: e.SYNC_BATCH_SIZE },
    allowedTargetHosts: e.ALLOWED_TARGET_HOSTS,
    codeLength: e.CODE_LENGTH,
    rootRedirectUrl: e.ROOT_REDIRECT_URL,
    trustedCountryHeader: e.TRUSTED_COUNTRY_HEADER,
    trustedClientIpHeader: e.TRUSTED_CLIENT_IP_HEADER,
    rateLimits: {
      createPerMinute: e.RATE_LIMIT_CREATE_PER_MINUTE,
      loginPerAccount: e.RATE_LIMIT_LOGIN_PER_ACCOUNT,
      loginPerIp: e.RATE_LIMIT_LOGIN_PER_IP,
      reportsPerHour: e.RATE_LIMIT_REPORTS_PER_HOUR,
      createPerIpPerMinute: e.RATE_LIMIT_CREATE_PER_IP_PER_MINUTE,
      safetyChecksPerMinute: e.RATE_LIMIT_SAFETY_CHECKS_PER_MINUTE,
    },
    loginHashQueueMax: e.LOGIN_HASH_QUEUE_MAX,
    dataDir: e.LIFELINE_DATA_DIR,
    logLevel: e.LOG_LEVEL,
    retarget: { requiresSecondAdmin: e.RETARGET_REQUIRES_SECOND_ADMIN },
    ga4:
      e.GA4_MEASUREMENT_ID && e.GA4_API_SECRET
        ? {
            measurementId: e.GA4_MEASUREMENT_ID,
            apiSecret: e.GA4_API_SECRET,
            endpoint: e.GA4_ENDPOINT,
            includeQr: e.GA4_INCLUDE_QR,
            maxQueue: e.GA4_QUEUE_MAX,
          }
        : undefined,
    wordpressRestUrls: e.WORDPRESS_REST_URLS,
    wordpressBreaker: { share: e.WORDPRESS_BREAKER_SHARE, min: e.WORDPRESS_BREAKER_MIN },
    escrow: {
      interval: e.ESCROW_INTERVAL,
      dir: e.ESCROW_DIR,
      keep: e.ESCROW_KEEP,
      signingKey: e.ESCROW_SIGNING_KEY,
    },
    snapshot: {
      interval: e.SNAPSHOT_INTERVAL,
      dir: e.SNAPSHOT_DIR,
      formats: e.SNAPSHOT_FORMATS,
      keep: e.SNAPSHOT_KEEP,
    },
    cdn: toCdnConfig(e),
    workerHealth: { port: e.WORKER_HEALTH_PORT, host: e.WORKER_HEALTH_HOST },
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    metricsToken: e.METRICS_TOKEN,
    reportWebhook: e.REPORT_WEBHOOK_URL
      ? { url: e.REPORT_WEBHOOK_URL, secret: e.REPORT_WEBHOOK_SECRET }
      : undefined,
    outgoing: { allowPrivate: e.OUTGOING_ALLOWED_PRIVATE },
  };
}

function toCdnConfig(e: Env): Config['cdn'] {
  switch (e.CDN_PURGE_PROVIDER) {
    case 'webhook':
      return { provider: 'webhook', url: e.CDN_PURGE_WEBHOOK_URL!, secret: e.CDN_PURGE_WEBHOOK_SECRET! };
    case 'cloudflare':
      return {
        provider: 'cloudflare',
        zoneId: e.CDN_PURGE_CLOUDFLARE_ZONE_ID!,
        apiToken: e.CDN_PURGE_CLOUDFLARE_API_TOKEN!,
        apiBaseUrl: e.CDN_PURGE_CLOUDFLARE_API_BASE_URL,
      };
    case 'cloudfront':
      return {
        provider: 'cloudfront',
        distributionId: e.CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID!,
        credentials: {
          accessKeyId: e.CDN_PURGE_AWS_ACCESS_KEY_ID!,
          secretAccessKey: e.CDN_PURGE_AWS_SECRET_ACCESS_KEY!,
          ...(e.CDN_PURGE_AWS_SESSION_TOKEN ? { sessionToken: e.CDN_PURGE_AWS_SESSION_TOKEN } : {}),
        },
        apiBaseUrl: e.CDN_PURGE_CLOUDFRONT_API_BASE_URL,
      };
    default:
      return undefined;
  }
}
