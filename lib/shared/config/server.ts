// The processes themselves: where the web tier and the worker listen, their public bases, logs, state and shutdown.
import { z } from 'zod';
import { commaList, optionalHttpUrl, optionalString, port } from './env_values.ts';

/** A host name as a Host header names it once lower-cased and without its port: letters, digits, `-`, dots. */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const serverEnv = z.object({
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
  SHORT_DOMAINS: commaList.pipe(
    z
      .array(z.string().regex(HOST_NAME, 'must list host names (a-z, 0-9, -, dots; punycode for IDN)'))
      .refine((v) => new Set(v).size === v.length, 'must not list a domain twice'),
  ),
  SHORT_DOMAIN_UNKNOWN_HOST: z.enum(['default', 'not_found']).default('default'),
  APP_BASE_URL: optionalHttpUrl,
  LIFELINE_DATA_DIR: optionalString,
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
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
});

export type ServerEnv = z.infer<typeof serverEnv>;

export interface ServerConfig {
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
  /** Public base of short links, without a trailing slash: the default short domain's. */
  shortBaseUrl: string;
  /**
   * The short domains, lower-case host names, the default first (SHORT_DOMAINS; unset: SHORT_BASE_URL's host
   * alone). Each serves its own links on SHORT_BASE_URL's scheme and port (shortBaseUrlOf, ADR 0078).
   */
  shortDomains: readonly string[];
  /**
   * What a short-host request whose Host names none of shortDomains gets (SHORT_DOMAIN_UNKNOWN_HOST): `default`,
   * the default domain's answers (as with one domain, so load balancers asking by address keep working), or
   * `not_found`, a 404 for every code.
   */
  unknownHost: 'default' | 'not_found';
  /** Base of the UI and API, without a trailing slash. */
  appBaseUrl: string;
  /** True when the short host and the app host differ: each serves only its own routes. */
  splitHosts: boolean;
  /**
   * Where first-run credentials are written (and `npm start` keeps its embedded state): LIFELINE_DATA_DIR, or
   * unset for `.data` in the checkout (boot/first_run_credentials.ts).
   */
  dataDir: string | undefined;
  logLevel: ServerEnv['LOG_LEVEL'];
  /** The worker's own HTTP port: /livez, /readyz and /metrics (its Node and Temporal SDK metrics). 0: any free port. */
  workerHealth: { port: number; host: string };
  /** After SIGTERM, how long a web instance keeps serving with /readyz at 503 before it stops accepting. */
  shutdownDelayMs: number;
  /** Bearer token GET /metrics requires (METRICS_TOKEN); unset: /metrics is not served. */
  metricsToken: string | undefined;
}

export function serverConfig(e: ServerEnv): ServerConfig {
  const shortBaseUrl = e.SHORT_BASE_URL ?? `http://127.0.0.1:${e.PORT}`;
  const appBaseUrl = e.APP_BASE_URL ?? shortBaseUrl;
  return {
    port: e.PORT,
    host: e.HOST,
    webConcurrency: e.WEB_CONCURRENCY,
    webhookBodiesMaxBytes: e.WEBHOOK_BODIES_MAX_BYTES,
    shortBaseUrl,
    shortDomains:
      e.SHORT_DOMAINS.length > 0 ? e.SHORT_DOMAINS : [new URL(shortBaseUrl).hostname.toLowerCase()],
    unknownHost: e.SHORT_DOMAIN_UNKNOWN_HOST,
    appBaseUrl,
    splitHosts: new URL(shortBaseUrl).host !== new URL(appBaseUrl).host,
    dataDir: e.LIFELINE_DATA_DIR,
    logLevel: e.LOG_LEVEL,
    workerHealth: { port: e.WORKER_HEALTH_PORT, host: e.WORKER_HEALTH_HOST },
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    metricsToken: e.METRICS_TOKEN,
  };
}

/**
 * Every rule between the short-host settings: the default short domain is SHORT_BASE_URL's host, so the first of
 * SHORT_DOMAINS must be it when both are set (links already made keep their short URLs).
 */
export function refineServerEnv(e: ServerEnv, ctx: z.RefinementCtx): void {
  const first = e.SHORT_DOMAINS[0];
  if (first === undefined || e.SHORT_BASE_URL === undefined) return;
  const host = new URL(e.SHORT_BASE_URL).hostname.toLowerCase();
  if (first !== host) {
    ctx.addIssue({
      code: 'custom',
      path: ['SHORT_DOMAINS'],
      message: `must start with SHORT_BASE_URL's host (${host}): the first short domain is the default`,
    });
  }
}
