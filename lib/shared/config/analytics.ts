// Clicks: how the click buffer flushes to Postgres, and the GA4 forwarding of its flushes.
import { z } from 'zod';
import type { IssueSink } from '../temporal_settings.ts';
import { flag, isHttpsOrLoopback, optionalHttpUrl, optionalString } from './env_values.ts';

export const analyticsEnv = z.object({
  CLICK_FLUSH_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  CLICK_FLUSH_MAX_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  CLICK_BUFFER_MAX_KEYS: z.coerce.number().int().min(100).max(10_000_000).default(250_000),
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
});

type AnalyticsEnv = z.infer<typeof analyticsEnv>;

export function refineAnalyticsEnv(env: AnalyticsEnv, ctx: IssueSink): void {
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
}

export interface AnalyticsConfig {
  /**
   * The click buffer: how often it is written to click_counts (the interval, stretched by long flushes up to the
   * maximum, never below the interval), and how many distinct aggregates it holds.
   */
  clicks: { flushIntervalMs: number; maxFlushIntervalMs: number; maxKeys: number };
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
}

export function analyticsConfig(e: AnalyticsEnv): AnalyticsConfig {
  return {
    clicks: {
      flushIntervalMs: e.CLICK_FLUSH_INTERVAL_MS,
      maxFlushIntervalMs: Math.max(e.CLICK_FLUSH_INTERVAL_MS, e.CLICK_FLUSH_MAX_INTERVAL_MS),
      maxKeys: e.CLICK_BUFFER_MAX_KEYS,
    },
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
  };
}
