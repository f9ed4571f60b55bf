import type { Logger } from '../shared/logger.ts';
import type { Sql } from '../stores/sql.ts';
import type { InvalidationBus } from './invalidation_bus.ts';

/** The NOTIFY channel (per database, so every instance on one database hears every change). */
export const LINK_CHANGES_CHANNEL = 'lifeline_link_changes';
/** How long to wait before trying to LISTEN again after a failure. */
const RELISTEN_DELAY_MS = 2_000;

/**
 * Invalidation over Postgres LISTEN/NOTIFY, for deployments without TCP Redis (Upstash REST cannot
 * subscribe cheaply). postgres.js keeps one dedicated connection for LISTEN and re-listens after a
 * reconnect, calling `onlisten` each time, which is when we resync.
 */
export function createPostgresInvalidationBus(options: { sql: Sql; logger?: Logger }): InvalidationBus {
  let closed = false;
  let unlisten: (() => Promise<void>) | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  return {
    kind: 'postgres',
    async publish(code, db) {
      await (db ?? options.sql)`SELECT pg_notify(${LINK_CHANGES_CHANNEL}, ${code})`;
    },
    async publishMany(codes) {
      if (codes.length === 0) return;
      await options.sql`
        SELECT pg_notify(${LINK_CHANGES_CHANNEL}, c) FROM unnest(${options.sql.array(codes)}::text[]) AS c`;
    },
    subscribe(handlers) {
      const listen = () => {
        options.sql
          .listen(
            LINK_CHANGES_CHANNEL,
            (code) => handlers.onCode(code),
            () => handlers.onResync(),
          )
          .then(async (meta) => {
            if (closed) await meta.unlisten();
            else unlisten = meta.unlisten;
          })
          .catch((err) => {
            if (closed) return;
            options.logger?.warn({ err }, 'invalidation bus: LISTEN failed; retrying');
            retry = setTimeout(listen, RELISTEN_DELAY_MS);
            retry.unref();
          });
      };
      listen();
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await unlisten?.().catch(() => {});
    },
  };
}
