// Redis, over TCP or Upstash's REST API: the serving store, the invalidation bus and shared rate-limit counters.
import { z } from 'zod';
import type { IssueSink } from '../temporal_settings.ts';
import { optionalHttpUrl, optionalString } from './env_values.ts';

export const redisEnv = z.object({
  REDIS_URL: optionalString.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .optional(),
  ),
  REDIS_KEY_PREFIX: z.string().default('lifeline:'),
  UPSTASH_REDIS_REST_URL: optionalHttpUrl,
  UPSTASH_REDIS_REST_TOKEN: optionalString,
});

type RedisEnv = z.infer<typeof redisEnv>;

export function refineRedisEnv(env: RedisEnv, ctx: IssueSink): void {
  if (env.UPSTASH_REDIS_REST_URL && !env.UPSTASH_REDIS_REST_TOKEN) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTASH_REDIS_REST_TOKEN'],
      message: 'is required when UPSTASH_REDIS_REST_URL is set',
    });
  }
}

export interface RedisConfig {
  redis:
    | { kind: 'tcp'; url: string; keyPrefix: string }
    | { kind: 'upstash'; url: string; token: string; keyPrefix: string }
    | undefined;
}

export function redisConfig(e: RedisEnv): RedisConfig {
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
  return { redis };
}
