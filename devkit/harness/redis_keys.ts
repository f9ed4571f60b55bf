// Keys a harness or bench wrote under its own prefix, deleted by SCAN (never FLUSHDB: the Redis is shared).

/** What is needed of a node-redis client (any of its module and RESP variants). */
interface ScanningClient {
  scanIterator(options: { MATCH: string; COUNT: number }): AsyncIterable<unknown>;
  unlink(keys: string[]): Promise<number>;
}

/** Deletes every key under `prefix`; returns how many. */
export async function deleteKeysByPrefix(redis: ScanningClient, prefix: string): Promise<number> {
  let deleted = 0;
  for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 10_000 })) {
    const batch = keys as string[];
    if (batch.length > 0) deleted += await redis.unlink(batch);
  }
  return deleted;
}
