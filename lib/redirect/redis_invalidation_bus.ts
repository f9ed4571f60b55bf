import type { Logger } from '../shared/logger.ts';
import type { InvalidationBus } from './invalidation_bus.ts';
import { closeRedisClient, createHotPathRedisClient, type RedisClient } from './redis_serving_store.ts';

/** Invalidation over Redis pub/sub (REDIS_URL): channel `{prefix}links:changed`, the code as the message. */
export function createRedisInvalidationBus(options: {
  url: string;
  keyPrefix: string;
  logger?: Logger;
}): InvalidationBus {
  const channel = `${options.keyPrefix}links:changed`;
  let publisher: RedisClient | undefined;
  let subscriber: RedisClient | undefined;
  const getPublisher = () => {
    if (!publisher) {
      publisher = createHotPathRedisClient(options.url, options.logger, 'invalidation bus');
      publisher.connect().catch(() => {});
    }
    return publisher;
  };
  return {
    kind: 'redis',
    async publish(code) {
      const client = getPublisher();
      // Right after start-up the first connection may still be opening: wait for it, briefly.
      if (!client.isReady) await waitReady(client, 2_000);
      await client.publish(channel, code);
    },
    async publishMany(codes) {
      const client = getPublisher();
      if (!client.isReady) await waitReady(client, 2_000);
      // Commands issued in one tick travel as one pipeline.
      await Promise.all(codes.map((code) => client.publish(channel, code)));
    },
    subscribe(handlers) {
      if (subscriber) throw new Error('already subscribed');
      const client = createHotPathRedisClient(options.url, options.logger, 'invalidation bus');
      subscriber = client;
      let subscribed = false;
      // node-redis re-subscribes by itself after a reconnect; messages sent while it was away are lost, so
      // every (re)connection after the first subscription drops the whole cache.
      client.on('ready', () => {
        if (subscribed) handlers.onResync();
      });
      client
        .connect()
        .then(() =>
          client.subscribe(channel, (message) => {
            handlers.onCode(message);
          }),
        )
        .then(() => {
          subscribed = true;
          handlers.onResync();
        })
        .catch((err) => options.logger?.warn({ err }, 'invalidation bus: subscription failed'));
    },
    async close() {
      if (subscriber) await closeRedisClient(subscriber);
      if (publisher) await closeRedisClient(publisher);
    },
  };
}

function waitReady(client: RedisClient, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error('Redis is not connected'));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}
