// The stampede check: 1,000 concurrent misses for one code must cost one Postgres query.
import { connect, type Socket } from 'node:net';
import postgres from 'postgres';
import { DATABASE_URL, REDIS_KEY_PREFIX, REDIS_URL, say, sleep } from './bench_settings.ts';
import { diffCounts, readOurCounters } from './read_our_metrics.ts';
import { startOurs } from './start_ours.ts';

/** Opens `n` sockets, then sends one GET for `path` on each in the same tick; returns the status codes. */
async function concurrentGets(port: number, path: string, n: number): Promise<number[]> {
  const sockets: Socket[] = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect(port, '127.0.0.1', () => resolve(s));
          s.once('error', reject);
        }),
    ),
  );
  const answers = sockets.map(
    (s) =>
      new Promise<number>((resolve) => {
        let text = '';
        s.on('data', (c: Buffer) => {
          text += c.toString('latin1');
        });
        s.on('close', () => resolve(Number(text.slice(9, 12)) || 0));
        s.on('error', () => resolve(0));
      }),
  );
  const req = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
  for (const s of sockets) s.write(req);
  return Promise.all(answers);
}

export async function benchStampede() {
  say('— stampede: 1,000 concurrent requests for one uncached code (LRU on, serving store on)');
  const code = `stampede${Date.now().toString(36)}`;
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  await sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES (${code}, 'https://news.example.com/stampede', 'active', 'clean', 'import', 'bench')`;
  await sql.end();
  const ours = await startOurs({ REDIS_URL, REDIS_KEY_PREFIX });
  try {
    const before = await readOurCounters(ours);
    const statuses = await concurrentGets(ours.port, `/${code}`, 1000);
    await sleep(300);
    const layers = diffCounts((await readOurCounters(ours)).lookups, before.lookups);
    const postgresQueries = Object.entries(layers)
      .filter(([k]) => k.startsWith('postgres/'))
      .reduce((n, [, v]) => n + v, 0);
    const redirected = statuses.filter((s) => s === 301).length;
    say(
      `stampede: ${redirected}/1000 answered 301; Postgres lookups ${postgresQueries}; ${JSON.stringify(layers)}`,
    );
    return { code, redirected, postgresQueries, layers, pass: postgresQueries === 1 && redirected === 1000 };
  } finally {
    await ours.stop();
  }
}

export function renderStampedeSection(r: Awaited<ReturnType<typeof benchStampede>>): string {
  return [
    `- Date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
    `- 1,000 sockets opened first, then one \`GET /${r.code}\` written on each in the same tick (code never requested before; LRU and serving store on).`,
    `- Answered 301: ${r.redirected} / 1000. Postgres lookups (lifeline_link_lookups_total{layer="postgres"} delta): **${r.postgresQueries}**.`,
    `- All lookup counters that moved: \`${JSON.stringify(r.layers)}\``,
    `- Result: ${r.pass ? 'PASS (one Postgres query)' : 'FAIL (expected exactly one Postgres query and 1000 redirects)'}`,
  ].join('\n');
}
