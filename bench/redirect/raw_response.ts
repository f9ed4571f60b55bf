// The bytes a server writes for one redirect, read over a raw socket (two requests on one connection, so the
// keep-alive behaviour is part of what is compared), and how two servers' bytes differ.
import { connect } from 'node:net';
import { BROWSER_USER_AGENT } from './bench_settings.ts';

export interface RawExchange {
  /** Each response as sent (latin1), Date header included. */
  responses: string[];
  /** The connection was still open after the last response (it was not closed by the server). */
  keptAlive: boolean;
}

/** Length of the first complete response in `text`, or -1 while incomplete. */
function measureResponse(text: string): number {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return -1;
  const head = text.slice(0, headEnd).toLowerCase();
  let at = headEnd + 4;
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  if (length) return text.length >= at + Number(length[1]) ? at + Number(length[1]) : -1;
  if (!/\r\ntransfer-encoding: *chunked/.test(head)) return at;
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at);
    if (lineEnd < 0) return -1;
    const size = Number.parseInt(text.slice(at, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error(`bad chunk size in ${JSON.stringify(text)}`);
    const next = lineEnd + 2 + size + 2;
    if (text.length < next) return -1;
    if (size === 0) return next;
    at = next;
  }
}

/** Sends `GET path` `count` times on one keep-alive connection, as a browser would (HTTP/1.1, its User-Agent). */
export function captureRawExchange(port: number, path: string, count = 2): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const responses: string[] = [];
    let pending = '';
    let closed = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer from port ${port} within 5 s: ${JSON.stringify(pending)}`));
    }, 5_000);
    const send = () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: ${BROWSER_USER_AGENT}\r\n` +
          'Accept: text/html\r\n\r\n',
      );
    socket.setEncoding('latin1');
    socket.on('connect', send);
    socket.on('close', () => {
      closed = true;
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('data', (chunk: string) => {
      pending += chunk;
      const length = measureResponse(pending);
      if (length < 0) return;
      responses.push(pending.slice(0, length));
      pending = pending.slice(length);
      if (responses.length < count) {
        send();
        return;
      }
      // Anything the server does next (closing, more bytes) would show within a short wait.
      setTimeout(() => {
        clearTimeout(timer);
        const keptAlive = !closed && pending === '';
        socket.destroy();
        resolve({ responses, keptAlive });
      }, 100);
    });
  });
}

/** A response without its Date header, which is the only part allowed to differ. */
export function withoutDate(response: string): string {
  return response.replace(/\r\nDate: [^\r]*/i, '');
}

/**
 * How `theirs` differs from `ours` (Date ignored), as short phrases; empty when the bytes are the same.
 */
export function describeDifference(ours: RawExchange, theirs: RawExchange): string[] {
  const out: string[] = [];
  if (ours.keptAlive !== theirs.keptAlive)
    out.push(theirs.keptAlive ? 'keeps the connection open (ours closes it)' : 'closes the connection');
  const a = withoutDate(ours.responses[0] ?? '');
  const b = withoutDate(theirs.responses[0] ?? '');
  if (theirs.responses.some((r) => withoutDate(r) !== b)) out.push('its two answers differ from each other');
  if (a === b) return out;
  const split = (r: string) => {
    const end = r.indexOf('\r\n\r\n');
    return { lines: r.slice(0, end).split('\r\n'), body: r.slice(end + 4) };
  };
  const x = split(a);
  const y = split(b);
  if (x.lines[0] !== y.lines[0]) out.push(`status line "${y.lines[0]}"`);
  const extra = y.lines.slice(1).filter((l) => !x.lines.includes(l));
  const missing = x.lines.slice(1).filter((l) => !y.lines.includes(l));
  if (extra.length > 0) out.push(`adds ${extra.map((l) => `"${l}"`).join(', ')}`);
  if (missing.length > 0) out.push(`lacks ${missing.map((l) => `"${l}"`).join(', ')}`);
  const common = x.lines.slice(1).filter((l) => y.lines.includes(l));
  const theirOrder = y.lines.slice(1).filter((l) => x.lines.includes(l));
  if (common.join('\n') !== theirOrder.join('\n'))
    out.push(`orders the shared headers ${theirOrder.map((l) => l.split(':')[0]).join(', ')}`);
  if (x.body !== y.body) out.push(`body ${y.body.length} bytes instead of ${x.body.length}`);
  return out;
}
