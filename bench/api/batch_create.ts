// Batch creation of 1,000 links against a loop of 1,000 single creations, in the same run, at two layers:
// the library alone (Postgres only) and the whole endpoint (HTTP handling, validation, audit, and a sync
// signal per new link to a real Temporal dev server: awaited per single creation, sent after the
// response for a batch — that background work is timed separately).
//
//   npx tsx bench/api/batch_create.ts [links=1000] [rounds=3]

import { createHarness } from '../../devkit/harness/harness.ts';
import { createLink } from '../../lib/links/create_link.ts';
import { createLinksBatch } from '../../lib/links/create_links_batch.ts';
import { drainBackgroundSyncs } from '../../lib/propagation/sync_after_change.ts';

const N = Number(process.argv[2] ?? 1000);
const ROUNDS = Number(process.argv[3] ?? 3);
const h = await createHarness({ env: { RATE_LIMIT_CREATE_PER_MINUTE: '1000000' } });
const deps = { sql: h.db.sql, codeLength: h.config.codeLength, targetPolicy: h.deps.targetPolicy };
let run = 0;
const items = () => {
  run++;
  return Array.from({ length: N }, (_, i) => ({
    url: `https://www.example-news.com/r${run}/story-${i}`,
    tags: ['bench'],
  }));
};
async function time(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const CASES = {
  libBatch: 'library: one batch (one INSERT statement)',
  libLoop: 'library: loop of single creations',
  apiBatch: 'endpoint: POST /links/batch',
  apiLoop: 'endpoint: loop of POST /links',
  background: 'after the batch response: its 1,000 sync signals',
} as const;
const times: Record<keyof typeof CASES, number[]> = {
  libBatch: [],
  libLoop: [],
  apiBatch: [],
  apiLoop: [],
  background: [],
};

try {
  for (let round = 0; round < ROUNDS; round++) {
    times.libBatch.push(
      await time(async () => {
        const results = await createLinksBatch(deps, items(), {
          owner: 'bench',
          actor: 'bench',
          origin: 'api',
        });
        if (results.some((r) => r.status !== 201)) throw new Error('a batch item failed');
      }),
    );
    times.libLoop.push(
      await time(async () => {
        for (const input of items())
          await createLink(deps, input, { owner: 'bench', actor: 'bench', origin: 'api' });
      }),
    );
    times.apiBatch.push(
      await time(async () => {
        const res = await h.api('/api/v1/links/batch', { method: 'POST', json: { links: items() } });
        if (res.status !== 200) throw new Error(`batch answered ${res.status}`);
        await res.json();
      }),
    );
    times.background.push(await time(() => drainBackgroundSyncs(h.deps.workflows)));
    times.apiLoop.push(
      await time(async () => {
        for (const json of items()) {
          const res = await h.api('/api/v1/links', { method: 'POST', json });
          if (res.status !== 201) throw new Error(`single creation answered ${res.status}`);
          await res.json();
        }
      }),
    );
  }
  const row = (key: keyof typeof CASES, base?: keyof typeof CASES) => {
    const m = median(times[key]);
    const ratio = base ? `${(m / median(times[base])).toFixed(1)}×` : '';
    console.log(`| ${CASES[key]} | ${m.toFixed(0)} | ${(m / N).toFixed(2)} | ${ratio} |`);
  };
  console.log(
    `\n${N.toLocaleString('en')} links, median of ${ROUNDS} rounds, real Postgres and Temporal dev server\n`,
  );
  console.log('| what | ms | ms per link | vs the batch |');
  console.log('|---|---:|---:|---:|');
  row('libBatch', 'libBatch');
  row('libLoop', 'libBatch');
  row('apiBatch', 'apiBatch');
  row('apiLoop', 'apiBatch');
  row('background');
} finally {
  await h.close();
}
process.exit(0);
