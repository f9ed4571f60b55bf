import { createClient } from '@redis/client';
import type { Logger } from '../shared/logger.ts';
import type { ServingRecord } from './serving_record.ts';
import {
  decodeServingRecord,
  encodeServingRecord,
  PUT_IF_NOT_OLDER_SCRIPT,
  type ServingStore,
  servingKey,
} from './serving_store.ts';

/**
 * A Redis client for the hot path: commands fail at once while disconnected (no offline queue, so an outage
 * costs a rejected promise, not a wait), and it reconnects in the background with capped backoff.
 */
export function createHotPathRedisClient(url: string, logger?: Logger, what = 'serving store') {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 1_000,
      reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 2_000),
    },
  });
  let lastLogged = 0;
  client.on('error', (err) => {
    if (Date.now() - lastLogged < 30_000) return;
    lastLogged = Date.now();
    logger?.warn({ err }, `${what}: Redis unavailable; falling through to Postgres until it is back`);
  });
  return client;
}

export type RedisClient = ReturnType<typeof createHotPathRedisClient>;

/** The serving store on Redis over TCP (REDIS_URL). */
export function createRedisServingStore(options: {
  url: string;
  keyPrefix: string;
  logger?: Logger;
}): ServingStore {
  const client = createHotPathRedisClient(options.url, options.logger);
  client.connect().catch(() => {});
  const key = (code: string) => servingKey(options.keyPrefix, code);
  // node-redis gives every command a 5 s timeout by default: an AbortSignal.timeout per command, whose timer
  // cannot be cancelled, so it always runs out and then builds a DOMException and an abort event (measured:
  // ~12% of the serving-store path's CPU). The hot-path read already has the resolver's own deadline (one timer
  // for all reads), so it goes without; every other command keeps the default.
  const reader = client.withCommandOptions({ timeout: 0 });
  return {
    kind: 'redis',
    get(code) {
      return reader.get(key(code)).then((raw) => decodeServingRecord(code, raw));
    },
    async getMany(codes) {
      if (codes.length === 0) return [];
      const values = await client.mGet(codes.map(key));
      return values.map((raw, i) => decodeServingRecord(codes[i]!, raw));
    },
    async put(record: ServingRecord) {
      const written = await client.eval(PUT_IF_NOT_OLDER_SCRIPT, {
        keys: [key(record.code)],
        arguments: [String(record.version), encodeServingRecord(record)],
      });
      return Number(written) === 1;
    },
    async delete(code) {
      await client.del(key(code));
    },
    async close() {
      await closeRedisClient(client);
    },
  };
}

/** Closes a client: gracefully when connected, at once when it is still trying to reconnect. */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  if (client.isReady) await client.close().catch(() => client.destroy());
  else if (client.isOpen) client.destroy();
}
