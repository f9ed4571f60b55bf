// The Bitly leg of reconciliation with several short domains (ADR 0073), through the real worker, the Temporal dev
// server, Postgres and the Bitly fake: each Bitly domain of ours is read against its own short domain's links, so
// a Bitly-only link on the second domain's Bitly domain is that domain's (imported under its key), a link missing
// there is found missing there, and a short domain without a Bitly domain is never counted missing (no false
// alarm). The report and lifeline_reconcile_drift say which domain.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { readReconcileDrift } from '../../lib/reconcile/reconcile_drift.ts';
import type { ReconcileReport } from '../../workflows/contract.ts';

const HOME = 'sho.rt.test';
const TWO = 'two.short.test';
const THREE = 'three.short.test';
const BITLY_HOME = 'bit.home.test';
const BITLY_TWO = 'bit.two.test';

let fake: BitlyFake;
let h: Harness;

before(async () => {
  fake = await startBitlyFake({ domains: [BITLY_HOME, BITLY_TWO] });
  h = await createHarness({
    env: {
      ...fake.env(),
      SHORT_BASE_URL: `https://${HOME}`,
      SHORT_DOMAINS: `${HOME},${TWO},${THREE}`,
      BITLY_DOMAINS: `${TWO}=${BITLY_TWO}`,
    },
  });
  await h.startWorker({ vendors: { retryBaseMs: 50, retryMaxMs: 500 } });
});
after(async () => {
  await h?.close();
  await fake?.stop();
});

async function reconcile(repair: boolean): Promise<ReconcileReport> {
  return (await h.temporal.client.workflow.execute('reconcileLinksWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: `reconcile:domains:${randomUUID()}`,
    args: [{ reason: 'test', repair, importExtra: true }],
  })) as ReconcileReport;
}

describe('Bitly reconciliation per short domain', () => {
  test('each Bitly domain against its own short domain’s links; the unmapped domain is not missing', async () => {
    // Postgres only: one link on each short domain, never synced (inserted directly).
    await h.db.sql`
      INSERT INTO links (code, domain, target_url, status, safety, origin, owner, created_at) VALUES
        ('rdHome', '', 'https://news.example/home', 'active', 'clean', 'api', 't', now() - interval '1 hour'),
        (${`${TWO}/rdTwo`}, ${TWO}, 'https://news.example/two', 'active', 'clean', 'api', 't', now() - interval '1 hour'),
        (${`${THREE}/rdThree`}, ${THREE}, 'https://news.example/three', 'active', 'clean', 'api', 't',
          now() - interval '1 hour')`;
    // Bitly only: a link on the second domain's Bitly domain, made there by hand.
    fake.seed({ longUrl: 'https://news.example/two-extra', keyword: 'rdExtra', domain: BITLY_TWO });

    const check = await reconcile(false);
    const byDomain = Object.fromEntries((check.bitly?.byDomain ?? []).map((d) => [d.domain, d.drift]));
    assert.deepEqual(byDomain[''], { missing: 1 });
    assert.deepEqual(byDomain[TWO], { missing: 1, extra: 1 });
    assert.equal(byDomain[THREE], undefined, 'a domain without a Bitly domain is not on Bitly by design');
    assert.equal(check.bitly?.drift.missing, 2);

    // The gauges: the Bitly leg by domain (host names), adding up to the leg's total.
    const drift = await readReconcileDrift(h.db.sql, h.config);
    const bitly = drift.found.filter((f) => f.leg === 'bitly' && f.count > 0);
    assert.deepEqual(
      bitly.map((f) => [f.domain, f.drift, f.count]).sort(),
      [
        [HOME, 'missing', 1],
        [TWO, 'extra', 1],
        [TWO, 'missing', 1],
      ].sort(),
    );

    // A repair: each link placed on its own Bitly domain, the Bitly-only one imported as the second domain's.
    await reconcile(true);
    assert.equal(fake.linkByKeyword('rdHome', BITLY_HOME)?.longUrl, 'https://news.example/home');
    assert.equal(fake.linkByKeyword('rdTwo', BITLY_TWO)?.longUrl, 'https://news.example/two');
    const [imported] = await h.db.sql<{ code: string; domain: string }[]>`
      SELECT code, domain FROM links WHERE target_url = 'https://news.example/two-extra'`;
    assert.deepEqual(imported, { code: `${TWO}/rdExtra`, domain: TWO });
    const after = await reconcile(false);
    assert.equal(
      (after.bitly?.byDomain ?? []).reduce(
        (n, d) => n + Object.values(d.drift).reduce((a, b) => a + (b ?? 0), 0),
        0,
      ),
      0,
      JSON.stringify(after.bitly),
    );
  });
});
