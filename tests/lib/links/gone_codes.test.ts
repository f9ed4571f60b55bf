import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../../devkit/fakes/bitly_fake.ts';
import { createTestDatabase } from '../../../devkit/harness/database.ts';
import { createHarness, createLinkCode, type Harness } from '../../../devkit/harness/harness.ts';
import { uniqueId } from '../../../devkit/harness/temporal.ts';
import {
  waitForPostLink,
  waitForPostWorkflow,
  wordpressEvent,
} from '../../../devkit/harness/wordpress_events.ts';
import { exportEscrow } from '../../../lib/escrow/export_escrow.ts';
import { restoreEscrow } from '../../../lib/escrow/restore_escrow.ts';
import { importVendorLink } from '../../../lib/reconcile/import_vendor_link.ts';
import { CODE_ALPHABET } from '../../../lib/shared/config.ts';
import { createCanonicalTargetPolicy } from '../../../lib/targets/target_rule.ts';
import type { ReconcileReport } from '../../../workflows/contract.ts';

// "A deleted or gone code can never again point elsewhere": every way a code comes into being — minting,
// aliases, batch creation, WordPress, the Bitly import and a restore — refuses a code that was deleted, and the
// code keeps answering 410 with its old row untouched.
let fake: BitlyFake;
let h: Harness;
let work: string;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({ env: { ...fake.env(), SHORT_BASE_URL: 'https://sho.rt' } });
  await h.startWorker({
    vendors: {
      bitly: { timeoutMs: 2_000, rateLimitRetryMs: 300, quotaRetryMs: 300 },
      retryBaseMs: 50,
      retryMaxMs: 400,
      publishWaitMs: 5_000,
    },
  });
  work = mkdtempSync(join(tmpdir(), 'lifeline-gone-'));
});
after(async () => {
  await h.close();
  await fake.stop();
  rmSync(work, { recursive: true, force: true });
});

/** A link created and then deleted through the API: its code answers 410 and keeps its row. */
async function deletedCode(url = 'https://news.example/retired'): Promise<string> {
  const code = await createLinkCode(h, { url });
  assert.equal((await h.api(`/api/v1/links/${code}`, { method: 'DELETE' })).status, 204);
  return code;
}

async function assertStillGone(code: string, url: string): Promise<void> {
  const [row] = await h.db.sql`SELECT target_url, status, deleted_at FROM links WHERE code = ${code}`;
  assert.equal(row?.target_url, url, `${code} kept its target`);
  assert.equal(row?.status, 'gone');
  assert.ok(row?.deleted_at, `${code} is still deleted`);
  const answer = await h.app.request(`/${code}`, { headers: { Host: 'sho.rt' } });
  assert.equal(answer.status, 410);
  assert.equal(answer.headers.get('Location'), null);
}

describe('a deleted code never points elsewhere', () => {
  test('minting: a fresh draw that hits a deleted code is drawn again', async () => {
    const code = await deletedCode();
    // The next code-sized draw of the CSPRNG spells the deleted code; the UNIQUE key must send minting on.
    const real = globalThis.crypto.getRandomValues.bind(globalThis.crypto);
    let forced = false;
    const steered = (array: Uint8Array<ArrayBuffer>) => {
      if (!forced && array instanceof Uint8Array && array.length === code.length) {
        forced = true;
        for (let i = 0; i < code.length; i++) array[i] = CODE_ALPHABET.indexOf(code[i]!);
        return array;
      }
      return real(array);
    };
    globalThis.crypto.getRandomValues = steered as unknown as typeof globalThis.crypto.getRandomValues;
    let minted: string;
    try {
      minted = await createLinkCode(h, { url: 'https://elsewhere.example/new' });
    } finally {
      globalThis.crypto.getRandomValues = real;
    }
    assert.ok(forced, 'the draw was steered onto the deleted code');
    assert.notEqual(minted, code);
    await assertStillGone(code, 'https://news.example/retired');
  });

  test('aliases: a deleted code asked for as an alias is a 409', async () => {
    const code = await deletedCode();
    const res = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://elsewhere.example/a', alias: code },
    });
    assert.equal(res.status, 409);
    assert.deepEqual((await res.json()).errors, [{ path: 'alias', message: 'is taken', code: 'taken' }]);
    await assertStillGone(code, 'https://news.example/retired');
  });

  test('batch: the item naming a deleted code is refused, the others are created', async () => {
    const code = await deletedCode();
    const res = await h.api('/api/v1/links/batch', {
      method: 'POST',
      json: {
        links: [{ url: 'https://elsewhere.example/b', alias: code }, { url: 'https://news.example/fresh' }],
      },
    });
    assert.equal(res.status, 200);
    const { results } = (await res.json()) as {
      results: { index: number; status: number; link?: { code: string } }[];
    };
    assert.equal(results[0]?.status, 409);
    assert.equal(results[1]?.status, 201);
    assert.notEqual(results[1]?.link?.code, code);
    await assertStillGone(code, 'https://news.example/retired');
  });

  test('WordPress: republishing or updating the post of a deleted link never brings it back', async () => {
    assert.equal(
      (
        await h.webhook(
          wordpressEvent('post.published', { postId: 501, permalink: 'https://news.example/p/501/' }),
        )
      ).status,
      202,
    );
    const link = await waitForPostLink(h, 'news', 501, (l) => l.status === 'active');
    await waitForPostWorkflow(h, 'news', 501);
    assert.equal((await h.api(`/api/v1/links/${link.code}`, { method: 'DELETE' })).status, 204);
    assert.equal(
      (
        await h.webhook(
          wordpressEvent('post.published', { postId: 501, permalink: 'https://news.example/p/501-again/' }),
        )
      ).status,
      202,
    );
    assert.equal(
      (
        await h.webhook(
          wordpressEvent('post.updated', { postId: 501, permalink: 'https://elsewhere.example/moved/' }),
        )
      ).status,
      202,
    );
    const result = await waitForPostWorkflow(h, 'news', 501);
    assert.equal(result.code, link.code, 'no second code for the post either');
    const [count] = await h.db
      .sql`SELECT count(*)::int AS n FROM links WHERE site = 'news' AND post_id = 501`;
    assert.equal(count?.n, 1);
    await assertStillGone(link.code, 'https://news.example/p/501/');
  });

  test('Bitly import: a Bitly link under a deleted code is never imported over it', async () => {
    const code = await deletedCode('https://news.example/bitly-retired');
    // Someone made a bitlink by hand on our domain with the deleted code as its back-half.
    fake.seed({ keyword: code, longUrl: 'https://elsewhere.example/hijack' });
    const workflowId = uniqueId('reconcile:gone');
    const report = (await h.temporal.client.workflow.execute('reconcileLinksWorkflow', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ reason: 'test', repair: true, importExtra: true }],
    })) as ReconcileReport;
    assert.ok(report.bitly, 'Bitly was reconciled');
    await assertStillGone(code, 'https://news.example/bitly-retired');
    // And the import step itself, called directly, refuses the existing code.
    const imported = await importVendorLink(h.db.sql, {
      code,
      vendor: 'bitly',
      link: {
        vendorId: `sho.rt/${code}`,
        shortIds: [`sho.rt/${code}`],
        longUrl: 'https://elsewhere.example/hijack',
        archived: false,
        group: null,
        title: null,
        createdAt: null,
        tags: [],
      },
      safety: { safety: 'clean', safetyReason: null, safetyCheckedAt: null },
      reason: 'test',
    });
    assert.equal(imported, false);
    await assertStillGone(code, 'https://news.example/bitly-retired');
  });

  test('restore: an export holding the code as a live link leaves the deleted one as it is', async () => {
    const code = await deletedCode('https://news.example/restore-retired');
    const other = await createTestDatabase();
    try {
      await other.sql`
        INSERT INTO links (code, target_url, status, safety, origin, owner)
        VALUES (${code}, 'https://elsewhere.example/restored', 'active', 'clean', 'api', 'other')`;
      const dir = join(work, 'export');
      await exportEscrow({ sql: other.sql }, { outDir: dir });
      const deps = { sql: h.db.sql, targetPolicy: createCanonicalTargetPolicy(h.config) };
      const summary = await restoreEscrow(deps, { dir, force: true });
      assert.equal(summary.mode, 'merge');
      assert.deepEqual(summary.skippedExamples, [code]);
      await assertStillGone(code, 'https://news.example/restore-retired');
      // Without --force a database with links is refused outright.
      await assert.rejects(restoreEscrow(deps, { dir }), /the database is not empty/);
    } finally {
      await other.drop();
    }
  });
});
