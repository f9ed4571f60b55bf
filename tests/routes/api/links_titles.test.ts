// Titles through the API (create, batch, edit, audit, dedupe, OpenAPI) and search by title and by the
// readable URL, Arabic included, against real Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import type { Link } from '../../../lib/links/link.ts';
import { expectFieldProblem } from '../../helpers/problem.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

/** Percent-encodes every byte, as WordPress writes non-Latin slugs. */
const wp = (s: string) =>
  [...new TextEncoder().encode(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

async function create(json: Record<string, unknown>, status = 201): Promise<Link> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.equal(res.status, status, await res.clone().text());
  return (await res.json()) as Link;
}
async function patch(code: string, json: Record<string, unknown>): Promise<Response> {
  return h.api(`/api/v1/links/${code}`, { method: 'PATCH', json });
}
async function search(q: string, extra = ''): Promise<string[]> {
  const res = await h.api(`/api/v1/links?q=${encodeURIComponent(q)}&limit=200${extra}`);
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { items: Link[] }).items.map((l) => l.code);
}
const audit = (code: string) =>
  h.db.sql<{ action: string; before: Record<string, unknown> | null; after: Record<string, unknown> }[]>`
    SELECT action, before, after FROM audit_log WHERE code = ${code} ORDER BY id`;

describe('titles', () => {
  test('POST accepts a title: trimmed, NFC, in the link, the audit entry and GET', async () => {
    // "é" as e + combining acute (NFD) is stored composed.
    const link = await create({
      url: 'https://example.com/t/1',
      title: '  Cafe\u0301 — نبأ من أسوان  ',
    });
    assert.equal(link.title, 'Café — نبأ من أسوان');
    const got = (await (await h.api(`/api/v1/links/${link.code}`)).json()) as Link;
    assert.equal(got.title, 'Café — نبأ من أسوان');
    const [created] = await audit(link.code);
    assert.equal(created!.action, 'link.created');
    assert.equal(created!.after.title, 'Café — نبأ من أسوان');
    // Without a title there is no title field at all.
    const plain = await create({ url: 'https://example.com/t/2' });
    assert.equal('title' in plain, false);
  });

  test('title rules: 1–500 characters (code points), one line, no bidi overrides, valid Unicode', async () => {
    const url = 'https://example.com/t/rules';
    const refused = async (title: unknown, why: RegExp) => {
      const res = await h.api('/api/v1/links', { method: 'POST', json: { url, title } });
      const problem = await expectFieldProblem(res, 422, 'title');
      assert.match(problem.errors!.find((e) => e.path === 'title')!.message, why);
    };
    await refused('', /empty/);
    await refused('   ', /empty/);
    await refused('a'.repeat(501), /at most 500/);
    await refused('first line\nsecond line', /one line/);
    await refused('tab\there', /one line/);
    await refused('nul\u0000', /one line/);
    await refused('line\u2028separator', /one line/);
    await refused('evil \u202Egnp.exe', /bidirectional/);
    await refused('isolate \u2067x\u2069', /bidirectional/);
    await refused(42, /string/i);
    // A lone surrogate cannot travel as UTF-8: JSON escapes can still carry one.
    const res = await h.api('/api/v1/links', {
      method: 'POST',
      body: `{"url":"${url}","title":"broken \\ud800 half"}`,
      headers: { 'Content-Type': 'application/json' },
    });
    await expectFieldProblem(res, 422, 'title');
    // 500 Arabic letters (1,000 UTF-8 bytes) or 500 emoji (1,000 UTF-16 units) are within the cap.
    assert.equal((await create({ url, title: 'ع'.repeat(500) })).title, 'ع'.repeat(500));
    assert.equal([...(await create({ url, title: '📰'.repeat(500) })).title!].length, 500);
    // The marks right-to-left text uses are fine.
    assert.equal(
      (await create({ url, title: 'سعر \u200Fالدولار\u200E 50 \u061Cجنيه' })).title,
      'سعر \u200Fالدولار\u200E 50 \u061Cجنيه',
    );
  });

  test('PATCH sets, changes and (with null) removes a title, audited each time', async () => {
    const link = await create({ url: 'https://example.com/t/patch' });
    let res = await patch(link.code, { title: 'أول عنوان', reason: 'headline' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as Link).title, 'أول عنوان');
    res = await patch(link.code, { title: 'عنوان معدّل' });
    assert.equal(((await res.json()) as Link).title, 'عنوان معدّل');
    res = await patch(link.code, { title: null });
    assert.equal('title' in ((await res.json()) as Link), false);
    const entries = (await audit(link.code)).slice(1);
    assert.deepEqual(
      entries.map((e) => [e.action, e.before?.title, e.after.title]),
      [
        ['link.updated', null, 'أول عنوان'],
        ['link.updated', 'أول عنوان', 'عنوان معدّل'],
        ['link.updated', 'عنوان معدّل', null],
      ],
    );
    // The same title again changes nothing; an empty one is refused.
    res = await patch(link.code, { title: null });
    assert.equal(res.status, 200);
    assert.equal((await audit(link.code)).length, 4);
    await expectFieldProblem(await patch(link.code, { title: '' }), 422, 'title');
    await expectFieldProblem(await patch(link.code, { title: 'a\nb' }), 422, 'title');
  });

  test('dedupe: the same url and title is the same link; another title is another link', async () => {
    const url = 'https://example.com/t/dedupe';
    const a = await create({ url, title: 'Election night' });
    assert.equal((await create({ url, title: 'Election night' }, 200)).code, a.code);
    const b = await create({ url, title: 'Election night: results' });
    assert.notEqual(b.code, a.code);
    // Without a title: the link without one (keys of untitled links are what they always were).
    const c = await create({ url });
    assert.notEqual(c.code, a.code);
    assert.equal((await create({ url }, 200)).code, c.code);
    // Retitling keeps dedupe pointing at what the link now is.
    await patch(a.code, { title: 'Renamed' });
    assert.equal((await create({ url, title: 'Renamed' }, 200)).code, a.code);
  });

  test('batch creation carries titles and refuses bad ones per item', async () => {
    const res = await h.api('/api/v1/links/batch', {
      method: 'POST',
      json: {
        links: [
          { url: 'https://example.com/t/b1', title: 'دفعة أولى' },
          { url: 'https://example.com/t/b2', title: 'bad\nline' },
        ],
      },
    });
    assert.equal(res.status, 200);
    const { results } = (await res.json()) as {
      results: { status: number; link?: Link; error?: { errors: { path: string }[] } }[];
    };
    assert.equal(results[0]!.status, 201);
    assert.equal(results[0]!.link!.title, 'دفعة أولى');
    assert.equal(results[1]!.status, 422);
    assert.equal(results[1]!.error!.errors[0]!.path, 'title');
    const [entry] = await audit(results[0]!.link!.code);
    assert.equal(entry!.after.title, 'دفعة أولى');
  });

  test('the OpenAPI document describes title on create and update', async () => {
    const doc = (await (await h.api('/api/v1/openapi.json')).json()) as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    for (const name of ['CreateLinkInput', 'UpdateLinkInput', 'Link']) {
      assert.ok(doc.components.schemas[name]!.properties.title, `${name} has title`);
    }
  });
});

describe('search by title and readable URL', () => {
  const codes: Record<string, string> = {};
  before(async () => {
    codes.cairo = (await create({ url: 'https://example.com/s/1', title: 'عاجل: خبر من القاهرة' })).code;
    codes.harakat = (await create({ url: 'https://example.com/s/2', title: 'مُحَمَّد صَلاح يُسَجِّل' })).code;
    codes.alef = (await create({ url: 'https://example.com/s/3', title: 'إعلان أسعار آخر الأسبوع' })).code;
    codes.slug = (
      await create({ url: `https://news.example/2026/${wp('الحرب')}-${wp('في')}-${wp('غزة')}/` })
    ).code;
    codes.hebrew = (await create({ url: 'https://example.com/s/5', title: 'שָׁלוֹם עולם' })).code;
    codes.latin = (await create({ url: 'https://example.com/s/6', title: 'Café Society: ÉTÉ 2026' })).code;
    codes.forms = (await create({ url: 'https://example.com/s/7', title: 'ﻻ ﺗﻨﺴﻰ' })).code; // presentation forms
    codes.tatweel = (await create({ url: 'https://example.com/s/8', title: 'عـــاجـــل الآن' })).code;
    codes.wildcard = (await create({ url: 'https://example.com/s/9', title: '50%_off الكل' })).code;
  });

  test('titles match by substring, Arabic included', async () => {
    assert.deepEqual(await search('خبر من'), [codes.cairo]);
    assert.deepEqual(await search('القاهرة'), [codes.cairo]);
  });

  test('folding: harakat, tatweel, alef forms, teh marbuta, alef maksura, case, accents, NFKC', async () => {
    assert.deepEqual(await search('محمد صلاح'), [codes.harakat], 'typed without harakat');
    assert.deepEqual(await search('مُحَمَّد'), [codes.harakat], 'typed with harakat');
    assert.deepEqual(await search('اعلان اسعار اخر'), [codes.alef], 'bare alef for أ إ آ');
    assert.deepEqual(await search('القاهره'), [codes.cairo], 'heh for teh marbuta');
    assert.deepEqual(await search('لا تنسي'), [codes.forms], 'presentation forms; yeh for alef maksura');
    assert.deepEqual((await search('عاجل')).sort(), [codes.cairo, codes.tatweel].sort(), 'tatweel');
    // Search also matches codes, case-insensitively, and minted codes are random letters: a Latin query
    // short enough to fit in a code could match one by chance ("ETE" once matched a minted "rETEcs").
    // So every Latin query here holds a character no code has (a space).
    assert.deepEqual(await search('cafe society'), [codes.latin], 'case and accents');
    assert.deepEqual(await search('ETE 2026'), [codes.latin]);
    assert.deepEqual(await search('שלום'), [codes.hebrew], 'Hebrew points');
    assert.deepEqual(await search('５０％_off'), [codes.wildcard], 'full-width digits and percent');
    assert.deepEqual(await search('%_off'), [codes.wildcard], 'wildcards are literal');
    // Nothing left after folding matches nothing (rather than everything).
    assert.deepEqual(await search('\u064e\u064f'), []);
  });

  test('the decoded slug of a percent-encoded URL matches Arabic typed by an editor', async () => {
    assert.deepEqual(await search('الحرب في غزة'.replaceAll(' ', '-')), [codes.slug]);
    assert.deepEqual(await search('غزه'), [codes.slug]);
    // The stored (encoded) form still matches too, as before.
    assert.deepEqual(await search(`${wp('غزة')}`), [codes.slug]);
  });

  test('an edit is searchable at once (the trigger keeps search_text)', async () => {
    const link = await create({ url: 'https://example.com/s/edit' });
    assert.deepEqual(await search('طقس الإسكندرية'), []);
    await patch(link.code, { title: 'طقس الإسكندرية اليوم' });
    assert.deepEqual(await search('طقس الاسكندرية'), [link.code]);
    await patch(link.code, { url: `https://example.com/${wp('رياضة')}` });
    assert.deepEqual(await search('رياضة'), [link.code]);
    await patch(link.code, { title: null });
    assert.deepEqual(await search('طقس'), []);
  });

  test('a common title word (thousands of links) pages through the walk path in order', async () => {
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner, title, created_at)
      SELECT 'w' || i, 'https://example.com/w/' || i, 'active', 'clean', 'api', 'test',
             'نشرة الأخبار رقم ' || i, now() - (i || ' seconds')::interval
      FROM generate_series(1, 3000) AS i`;
    await h.db.sql`ANALYZE links`;
    const first = await h.api(`/api/v1/links?q=${encodeURIComponent('نشره الاخبار')}&limit=50`);
    const page = (await first.json()) as { items: Link[]; nextCursor: string };
    assert.deepEqual(
      page.items.map((l) => l.code),
      Array.from({ length: 50 }, (_, i) => `w${i + 1}`),
    );
    const second = await h.api(
      `/api/v1/links?q=${encodeURIComponent('نشره الاخبار')}&limit=50&cursor=${page.nextCursor}`,
    );
    assert.equal(((await second.json()) as { items: Link[] }).items[0]!.code, 'w51');
    // A rare one among them goes through the indexes.
    assert.deepEqual(await search('نشرة الأخبار رقم 2999'), ['w2999']);
  });
});
