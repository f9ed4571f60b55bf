// `npm run web` as WEB_CONCURRENCY processes on one port (ADR 0023). The primary (main.ts with WEB_CONCURRENCY > 1)
// prepares the database once, then forks that many web processes of main.ts; each binds the same host and port
// with SO_REUSEPORT (Node's `reusePort` listen option), so the kernel spreads connections over them with no
// process in between. Each has its own pool, LRU, click buffer and subscription to the one invalidation bus
// (Redis pub/sub or Postgres LISTEN), exactly as separate replicas would. The primary serves nothing: it
// relays signals, gathers /metrics, and stops everything when one process dies.
import { type ChildProcess, fork } from 'node:child_process';
import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import type { Logger } from '../lib/shared/logger.ts';
import type {
  SharedLimiterAnswer,
  SharedLimiterChannel,
  SharedLimiterRequest,
} from '../lib/shared/shared_limiter.ts';

/** Set by the primary on each process it forks: its index, 0 … WEB_CONCURRENCY − 1. */
export const WEB_PROCESS_ENV = 'LIFELINE_WEB_PROCESS';
/** The label every series of a web process carries in the gathered /metrics view. */
export const WEB_PROCESS_LABEL = 'web_process';
/** A process that does not hand over its metrics within this is left out of that scrape (and said so). */
const GATHER_TIMEOUT_MS = 2_000;

type Family = MetricObjectWithValues<MetricValue<string>>;

/** What the primary and its web processes say to each other over the IPC channel. */
type Message =
  | { type: 'listening'; index: number }
  | { type: 'metrics-request'; id: number }
  | { type: 'metrics-collect'; id: number }
  | { type: 'metrics-json'; id: number; index: number; families: Family[] }
  | { type: 'metrics-text'; id: number; text: string }
  | { type: 'limit'; id: number; request: SharedLimiterRequest }
  | { type: 'limit-answer'; id: number; answer?: SharedLimiterAnswer; error?: string };

/** This process's index when the primary forked it; undefined for the primary or a single process. */
export function webProcessIndex(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[WEB_PROCESS_ENV];
  if (raw === undefined || raw === '') return undefined;
  const index = Number(raw);
  return Number.isInteger(index) && index >= 0 ? index : undefined;
}

/**
 * Platforms whose kernels spread connections over SO_REUSEPORT listeners (Node's `reusePort` documentation).
 * Elsewhere (macOS, Windows) the option is refused or only one listener would get connections.
 */
const REUSEPORT_PLATFORMS: readonly string[] = ['linux', 'freebsd', 'openbsd', 'sunos', 'aix'];

/** Why WEB_CONCURRENCY > 1 cannot run here, or undefined when it can. */
export function reusePortUnavailable(platform = process.platform): string | undefined {
  if (REUSEPORT_PLATFORMS.includes(platform)) return undefined;
  return `WEB_CONCURRENCY > 1 needs SO_REUSEPORT load balancing (Linux, FreeBSD…), which ${platform} lacks; run WEB_CONCURRENCY=1 processes on separate ports behind a proxy instead`;
}

// --------------------------------------------------------------------------------------------- primary

export interface WebPrimaryOptions {
  count: number;
  /** The entry each web process runs (main.ts), with this process's Node flags (the tsx loader). */
  entry: string;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /**
   * The rate-limit counters every web process shares when there is no Redis (createSharedLimiterHost): without
   * them each process would allow the whole budget, N processes N times it (ADR 0061).
   */
  limiter?: { answer(request: SharedLimiterRequest): Promise<SharedLimiterAnswer> };
}

export interface WebPrimary {
  /** Resolves once every process listens; rejects (after stopping the others) if one exits first. */
  ready: Promise<void>;
  /** Sends SIGTERM to every process (each drains and flushes its clicks) and waits for all to exit. */
  stop(): Promise<number>;
  /** Resolves with an exit code when every process has exited (stopped, or one died and took the rest down). */
  exited: Promise<number>;
  pids(): number[];
}

/** Forks the web processes and watches them; the caller wires signals (boot/shutdown.ts) to `stop`. */
export function startWebPrimary(options: WebPrimaryOptions): WebPrimary {
  const { count, entry, logger } = options;
  const children: ChildProcess[] = [];
  const listening = new Set<number>();
  let stopping = false;
  let worstCode = 0;
  let resolveReady!: () => void;
  let rejectReady!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  ready.catch(() => {});
  let alive = count;
  let resolveExited!: (code: number) => void;
  const exited = new Promise<number>((resolve) => {
    resolveExited = resolve;
  });

  /** Pending metrics gathers, by request id: the requester and the families received so far. */
  const gathers = new Map<
    number,
    {
      from: ChildProcess;
      requestId: number;
      families: Family[][];
      waiting: Set<number>;
      timer: NodeJS.Timeout;
    }
  >();
  let nextGather = 0;

  function finishGather(gatherId: number): void {
    const gather = gathers.get(gatherId);
    if (!gather) return;
    gathers.delete(gatherId);
    clearTimeout(gather.timer);
    let text = renderFamilies(mergeFamilies(gather.families));
    if (gather.waiting.size > 0)
      text = `# web processes that did not answer in time: ${[...gather.waiting].join(', ')}\n${text}`;
    send(gather.from, { type: 'metrics-text', id: gather.requestId, text });
  }

  function onMessage(child: ChildProcess, index: number, message: Message): void {
    if (message.type === 'listening') {
      listening.add(index);
      if (listening.size === count) {
        logger.info({ processes: count, pids: children.map((c) => c.pid) }, 'every web process listening');
        resolveReady();
      }
    } else if (message.type === 'metrics-request') {
      const gatherId = nextGather++;
      const waiting = new Set<number>();
      for (const [i, c] of children.entries()) if (c.connected) waiting.add(i);
      const timer = setTimeout(() => finishGather(gatherId), GATHER_TIMEOUT_MS);
      timer.unref();
      gathers.set(gatherId, { from: child, requestId: message.id, families: [], waiting, timer });
      for (const i of waiting) send(children[i]!, { type: 'metrics-collect', id: gatherId });
    } else if (message.type === 'limit') {
      const { id } = message;
      if (!options.limiter) {
        send(child, { type: 'limit-answer', id, error: 'the primary keeps no shared counters' });
        return;
      }
      options.limiter.answer(message.request).then(
        (answer) => send(child, { type: 'limit-answer', id, answer }),
        (error: unknown) => send(child, { type: 'limit-answer', id, error: String(error) }),
      );
    } else if (message.type === 'metrics-json') {
      const gather = gathers.get(message.id);
      if (!gather?.waiting.delete(index)) return;
      gather.families.push(message.families);
      if (gather.waiting.size === 0) finishGather(message.id);
    }
  }

  function stopAll(signal: NodeJS.Signals): void {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }

  for (let index = 0; index < count; index++) {
    const child = fork(entry, process.argv.slice(2), {
      env: { ...process.env, [WEB_PROCESS_ENV]: String(index) },
      execArgv: process.execArgv,
      // Metric values may be NaN or ±Infinity, which JSON would turn into null.
      serialization: 'advanced',
      // Its own process group: a terminal's Ctrl-C reaches the primary only, which stops each process once.
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(child);
    child.on('message', (message) => onMessage(child, index, message as Message));
    child.once('exit', (code, signal) => {
      alive--;
      const clean = stopping && code === 0;
      if (!clean) worstCode = Math.max(worstCode, code ?? 1);
      // A gather waiting for this process completes with the others' answers.
      for (const [gatherId, gather] of gathers)
        if (gather.waiting.delete(index) && gather.waiting.size === 0) finishGather(gatherId);
      if (!stopping) {
        stopping = true;
        logger.error(
          { webProcess: index, code, signal },
          'a web process exited on its own; stopping the others (the supervisor restarts the service)',
        );
        rejectReady(
          new Error(`web process ${index} exited (${code ?? signal}) before every process listened`),
        );
        stopAll('SIGTERM');
      }
      if (alive === 0) resolveExited(worstCode);
    });
  }

  return {
    ready,
    exited,
    pids: () => children.map((c) => c.pid ?? 0),
    async stop() {
      if (!stopping) {
        stopping = true;
        stopAll('SIGTERM');
      }
      return exited;
    },
  };
}

function send(child: ChildProcess, message: Message): void {
  // A process that just exited cannot be told: its gather slot is released by its exit handler instead.
  if (child.connected) child.send(message, () => {});
}

/** One family per metric name, every process's series side by side (each carries its web_process label). */
export function mergeFamilies(perProcess: Family[][]): Family[] {
  const byName = new Map<string, Family>();
  for (const families of perProcess) {
    for (const family of families) {
      const known = byName.get(family.name);
      if (known) known.values.push(...family.values);
      else byName.set(family.name, { ...family, values: [...family.values] });
    }
  }
  return [...byName.values()];
}

/** Prometheus text exposition (0.0.4) of merged families, formatted as prom-client formats its own. */
export function renderFamilies(families: Family[]): string {
  const blocks = families.map((family) => {
    const lines = [
      `# HELP ${family.name} ${escapeHelp(family.help)}`,
      `# TYPE ${family.name} ${family.type}`,
    ];
    for (const value of family.values) {
      const name = (value as { metricName?: string }).metricName ?? family.name;
      const labels = Object.entries(value.labels ?? {})
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}="${escapeLabel(String(v))}"`);
      lines.push(`${name}${labels.length > 0 ? `{${labels.join(',')}}` : ''} ${formatValue(value.value)}`);
    }
    return lines.join('\n');
  });
  return `${blocks.join('\n\n')}\n`;
}

const escapeHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  return String(value);
}

// ----------------------------------------------------------------------------------------- web process

export interface WebProcessLink {
  /** Tells the primary this process is listening. */
  listening(): void;
  /** Every web process's metrics in one Prometheus text (gathered by the primary; this process's alone if it cannot). */
  metricsText(): Promise<string>;
}

/**
 * Joins the primary from a forked web process: labels this process's metrics with web_process, answers the
 * primary's gathers, and shuts down in order (SIGTERM to itself) if the primary disappears.
 */
export function joinWebPrimary(index: number, registry: Registry): WebProcessLink {
  registry.setDefaultLabels({ [WEB_PROCESS_LABEL]: String(index) });
  const pending = new Map<number, (text: string) => void>();
  let nextId = 0;
  process.on('message', (raw) => {
    const message = raw as Message;
    if (message.type === 'metrics-collect') {
      registry.getMetricsAsJSON().then(
        (families) =>
          process.send?.({
            type: 'metrics-json',
            id: message.id,
            index,
            families: families as Family[],
          } satisfies Message),
        () => process.send?.({ type: 'metrics-json', id: message.id, index, families: [] } satisfies Message),
      );
    } else if (message.type === 'metrics-text') {
      pending.get(message.id)?.(message.text);
      pending.delete(message.id);
    }
  });
  // The primary is gone (killed, crashed): nothing relays signals any more, so stop as a SIGTERM would.
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  return {
    listening() {
      process.send?.({ type: 'listening', index } satisfies Message);
    },
    metricsText() {
      if (!process.connected) return registry.metrics();
      const id = nextId++;
      return new Promise<string>((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          resolve(registry.metrics());
        }, GATHER_TIMEOUT_MS * 2);
        timer.unref();
        pending.set(id, (text) => {
          clearTimeout(timer);
          resolve(text);
        });
        process.send?.({ type: 'metrics-request', id } satisfies Message);
      });
    },
  };
}

/** A shared-counter call the primary does not answer within this fails; the caller's insurance limiter answers. */
const LIMIT_CALL_TIMEOUT_MS = 1_000;

/**
 * The rate-limit counters of the primary, from a forked web process: each call goes over the IPC channel and is
 * answered by the primary's createSharedLimiterHost. A call fails when the primary is gone or slow.
 */
export function connectSharedLimiter(): SharedLimiterChannel {
  const pending = new Map<number, (message: Extract<Message, { type: 'limit-answer' }>) => void>();
  let nextId = 0;
  process.on('message', (raw) => {
    const message = raw as Message;
    if (message.type === 'limit-answer') pending.get(message.id)?.(message);
  });
  return {
    call(request) {
      if (!process.connected || !process.send) return Promise.reject(new Error('no primary'));
      const id = nextId++;
      return new Promise<SharedLimiterAnswer>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error('the primary did not answer'));
        }, LIMIT_CALL_TIMEOUT_MS);
        timer.unref();
        pending.set(id, (message) => {
          pending.delete(id);
          clearTimeout(timer);
          if (message.answer) resolve(message.answer);
          else reject(new Error(message.error ?? 'no answer'));
        });
        process.send?.({ type: 'limit', id, request } satisfies Message);
      });
    },
  };
}
