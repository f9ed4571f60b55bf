import {
  Client,
  Connection,
  type ConnectionOptions,
  type WorkflowClientInterceptor,
} from '@temporalio/client';

/**
 * The one Temporal client connection of a web process, shared by every gateway: a connection is costly to open and
 * multiplexes every call, so a process keeps one. Lazily connected, so the web tier starts (and redirects) while
 * Temporal is down; work handed to it is bounded by `withDeadline` so a request never waits on Temporal for long.
 */
export interface TemporalClient {
  client: Client;
  /** Runs `fn` with a gRPC deadline `ms` from now. */
  withDeadline<T>(ms: number, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Opens (lazily) the process's Temporal client with the connection options of lib/temporal/connection_options.ts
 * (address, TLS / mTLS, API key, gRPC metadata). `interceptors`: tracing's, which carry the request's trace context
 * into each workflow it starts or signals (boot/tracing.ts).
 */
export function createTemporalClient(options: {
  connection: ConnectionOptions;
  namespace: string;
  interceptors?: WorkflowClientInterceptor[];
}): TemporalClient {
  const connection = Connection.lazy(options.connection);
  const client = new Client({
    connection,
    namespace: options.namespace,
    ...(options.interceptors ? { interceptors: { workflow: options.interceptors } } : {}),
  });
  return {
    client,
    withDeadline: (ms, fn) => connection.withDeadline(Date.now() + ms, fn),
    close: () => connection.close(),
  };
}
