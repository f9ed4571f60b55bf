// One wrk run with bench/redirect/random_codes.lua, parsed from the script's JSON line.
import { execFileSync, spawn } from 'node:child_process';
import { BROWSER_USER_AGENT, CODE_PREFIX, CONNECTIONS, LUA } from './bench_settings.ts';

/** What random_codes.lua prints, plus derived figures. */
export interface WrkResult {
  /** Responses wrk read completely (any status). */
  requests: number;
  duration_us: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  max_us: number;
  mean_us: number;
  /** Responses with a status above 399 (wrk's "Non-2xx or 3xx responses"). */
  non_3xx: number;
  connect_errors: number;
  read_errors: number;
  write_errors: number;
  timeouts: number;
  /** Stop requests sent after BENCH_CLICKS_UNTIL (0 without a click window). */
  stops_sent: number;
  /** Code requests sent per sample bucket since BENCH_CLICKS_FROM (empty without a click window). */
  sent_per_sample: number[];
  /** requests per second of wrk's whole duration. */
  rps: number;
  /** Responses with status ≤ 399: with our data, the 301s (every code the bench requests exists). */
  redirects: number;
  /** Socket errors and timeouts (status errors are in non_3xx). */
  socketErrors: number;
}

export interface WrkOptions {
  codes: number;
  order: 'random' | 'seq';
  connections?: number;
  prefix?: string;
  /** `long` mode: code requests only from `from` until `until` (epoch seconds), then stop requests. */
  clickWindow?: { from: number; until: number; sampleSeconds: number };
  /** The User-Agent every request sends: a browser's unless given; '' sends none, as plain wrk does. */
  userAgent?: string;
}

/** Runs wrk -t1 against `url` for `seconds` (whole seconds; wrk takes no fractions). */
export function runWrk(url: string, seconds: number, options: WrkOptions): Promise<WrkResult> {
  return new Promise((resolve, reject) => {
    const window = options.clickWindow;
    const child = spawn(
      'wrk',
      [
        '-t1',
        `-c${options.connections ?? CONNECTIONS}`,
        `-d${Math.max(1, Math.ceil(seconds))}s`,
        '--timeout',
        '5s',
        '-s',
        LUA,
        `${url}/`,
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          BENCH_PREFIX: options.prefix ?? CODE_PREFIX,
          // The rules path's languages (paths_mode.ts sets them for its rounds only).
          ...(process.env.BENCH_ACCEPT_LANGUAGES
            ? { BENCH_ACCEPT_LANGUAGES: process.env.BENCH_ACCEPT_LANGUAGES }
            : {}),
          BENCH_CODES: String(options.codes),
          BENCH_ORDER: options.order,
          BENCH_USER_AGENT: options.userAgent ?? BROWSER_USER_AGENT,
          ...(window
            ? {
                BENCH_CLICKS_FROM: String(window.from),
                BENCH_CLICKS_UNTIL: String(window.until),
                BENCH_SAMPLE_SECONDS: String(window.sampleSeconds),
              }
            : {}),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = /BENCH_RESULT (\{.*\})/.exec(out)?.[1];
      if (code !== 0 || !line) return reject(new Error(`wrk failed (${code}): ${out}`));
      const r = JSON.parse(line) as Omit<WrkResult, 'rps' | 'redirects' | 'socketErrors'>;
      resolve({
        ...r,
        rps: r.requests / (r.duration_us / 1e6),
        redirects: r.requests - r.non_3xx,
        socketErrors: r.connect_errors + r.read_errors + r.write_errors + r.timeouts,
      });
    });
  });
}

/** Every error wrk saw: status above 399, socket errors and timeouts. */
export function countWrkErrors(r: WrkResult): number {
  return r.non_3xx + r.socketErrors;
}

/** wrk's version line, for the report. */
export function getWrkVersion(): string {
  let line = 'wrk';
  try {
    line = execFileSync('wrk', ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch (error) {
    // wrk --version prints its version and exits 1.
    line =
      String((error as { stdout?: string }).stdout ?? '')
        .split('\n')[0]!
        .trim() || 'wrk';
  }
  return line.replace(/ Copyright.*/, '');
}
