// A plain-text gRPC hop that records each call's method and headers on the way to the real server. A proxy
// outside TLS cannot see the `authorization` header, so the TLS proxy forwards to this hop, which then forwards
// to the Temporal dev server: the client and the worker talk TLS to nginx, and we read what they sent.
import { connect, constants, createServer, type IncomingHttpHeaders } from 'node:http2';

export interface RecordedCall {
  /** e.g. /temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution */
  path: string;
  authorization: string | undefined;
  userAgent: string | undefined;
}

export interface GrpcHeaderRecorder {
  port: number;
  calls: RecordedCall[];
  close(): Promise<void>;
}

// Hop-by-hop headers an HTTP/2 proxy must not forward.
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_HEADERS.has(name)) out[name] = value;
  }
  return out;
}

/** Listens on 127.0.0.1:<free port> (h2c, prior knowledge, as gRPC without TLS speaks) and forwards to `target`. */
export async function startGrpcHeaderRecorder(target: {
  host: string;
  port: number;
}): Promise<GrpcHeaderRecorder> {
  const calls: RecordedCall[] = [];
  const upstream = connect(`http://${target.host}:${target.port}`);
  upstream.on('error', () => {});
  const server = createServer();
  const sessions = new Set<{ destroy(): void }>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    const path = String(headers[':path']);
    calls.push({
      path,
      authorization: headers.authorization,
      userAgent: headers['user-agent'],
    });
    const request = upstream.request(forwardable(headers));
    let trailers: Record<string, string | string[]> | undefined;
    request.on('response', (responseHeaders) => {
      stream.respond(forwardable(responseHeaders), { waitForTrailers: true });
    });
    request.on('trailers', (received) => {
      trailers = forwardable(received);
    });
    stream.on('wantTrailers', () => {
      // A trailers-only answer (a gRPC error) carried its status in the headers already.
      if (trailers) stream.sendTrailers(trailers);
      else stream.close();
    });
    request.on('error', () => stream.close(constants.NGHTTP2_INTERNAL_ERROR));
    stream.on('error', () => request.close(constants.NGHTTP2_CANCEL));
    stream.on('close', () => {
      if (!request.closed) request.close(constants.NGHTTP2_CANCEL);
    });
    stream.pipe(request);
    request.pipe(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    calls,
    async close() {
      for (const session of sessions) session.destroy();
      upstream.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
