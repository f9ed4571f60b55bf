import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { createUser } from '../../lib/auth/manage_users.ts';
import { expectProblem } from '../helpers/problem.ts';
import { createUiClient, type UiClient } from '../helpers/ui_client.ts';

// A link bound to a WordPress post is the article's one link: where it sends readers (url, status, expiresAt,
// expiredUrl, redirectStatus) is WordPress's or an administrator's. An expiry a minute ahead with a fallback on
// another host would otherwise hand the article's code (printed, shared) to anyone with `links:write` or an
// editor's login; a 301 would pin browsers to today's target.

let h: Harness;
let writerKey: string;
let admin: UiClient;
let editor: UiClient;

before(async () => {
  h = await createHarness();
  const issued = await h.api('/api/v1/keys', {
    method: 'POST',
    json: { name: 'integrator', scopes: ['links:write'] },
  });
  writerKey = ((await issued.json()) as { key: string }).key;
  admin = createUiClient(h.app as never);
  assert.equal((await admin.login('admin@example.test', 'correct horse battery')).status, 303);
  await createUser(
    h.db.sql,
    { email: 'editor@example.test', name: 'Ed', role: 'editor', password: 'editor password 1' },
    'test',
  );
  editor = createUiClient(h.app as never);
  assert.equal((await editor.login('editor@example.test', 'editor password 1')).status, 303);
});
after(async () => {
  await h?.close();
});

const asWriter = (path: string, init: RequestInit & { json?: unknown } = {}) =>
  h.api(path, { ...init, headers: { Authorization: `Bearer ${writerKey}`, ...(init.headers as object) } });

let nextPost = 8300; // post IDs are workflow IDs on the shared dev server: a range no other file uses
/** A post-bound link (as WordPress or an admin makes one) and an ordinary one. */
async function createPair(): Promise<{ bound: string; free: string }> {
  const postId = nextPost++;
  const bound = await h.api('/api/v1/links', {
    method: 'POST',
    json: { url: `https://example.com/article-${postId}`, site: 'newsroom', postId },
  });
  assert.equal(bound.status, 201, await bound.clone().text());
  const free = await asWriter('/api/v1/links', {
    method: 'POST',
    json: { url: `https://example.com/free-${postId}` },
  });
  assert.equal(free.status, 201, await free.clone().text());
  return {
    bound: ((await bound.json()) as { code: string }).code,
    free: ((await free.json()) as { code: string }).code,
  };
}

const inAMinute = () => new Date(Date.now() + 60_000).toISOString();
/** One change per field that decides where a reader lands. */
const DECIDING_CHANGES: [string, () => Record<string, unknown>][] = [
  ['url', () => ({ url: 'https://elsewhere.example/hijack' })],
  ['status', () => ({ status: 'gone' })],
  ['expiresAt', () => ({ expiresAt: inAMinute() })],
  ['expiredUrl', () => ({ expiredUrl: 'https://elsewhere.example/after-expiry' })],
  ['redirectStatus', () => ({ redirectStatus: 301 })],
];

async function rowOf(code: string) {
  const [row] = await h.db.sql<
    {
      targetUrl: string;
      status: string;
      expiresAt: Date | null;
      expiredUrl: string | null;
      redirectStatus: number | null;
    }[]
  >`SELECT target_url AS "targetUrl", status, expires_at AS "expiresAt", expired_url AS "expiredUrl",
           redirect_status AS "redirectStatus" FROM links WHERE code = ${code}`;
  return row!;
}

describe('post-bound links: where the reader lands is WordPress’s or an admin’s', () => {
  test('API: a links:write key gets a 403 naming each deciding field; an admin key may; other fields stay open', async () => {
    const { bound, free } = await createPair();
    const before = await rowOf(bound);
    for (const [field, change] of DECIDING_CHANGES) {
      const problem = await expectProblem(
        await asWriter(`/api/v1/links/${bound}`, { method: 'PATCH', json: change() }),
        403,
      );
      assert.deepEqual(
        problem.errors?.map((e) => e.path),
        [field],
        `${field}: ${JSON.stringify(problem)}`,
      );
      // The same change of an ordinary link is the writer's to make.
      const own = await asWriter(`/api/v1/links/${free}`, { method: 'PATCH', json: change() });
      assert.equal(own.status, 200, `${field} on an ordinary link: ${await own.clone().text()}`);
    }
    // The hijack itself, all at once: every field named, nothing written.
    const hijack = await expectProblem(
      await asWriter(`/api/v1/links/${bound}`, {
        method: 'PATCH',
        json: { expiresAt: inAMinute(), expiredUrl: 'https://elsewhere.example/phish', redirectStatus: 301 },
      }),
      403,
    );
    assert.deepEqual(hijack.errors?.map((e) => e.path).sort(), ['expiredUrl', 'expiresAt', 'redirectStatus']);
    assert.deepEqual(await rowOf(bound), before, 'nothing changed');
    // Sending the stored value again is no change, and tags are anyone's.
    const same = await asWriter(`/api/v1/links/${bound}`, {
      method: 'PATCH',
      json: { url: before.targetUrl, status: 'active', expiresAt: null, expiredUrl: null, tags: ['ok'] },
    });
    assert.equal(same.status, 200, await same.clone().text());

    for (const [field, change] of DECIDING_CHANGES) {
      const res = await h.api(`/api/v1/links/${bound}`, { method: 'PATCH', json: change() });
      assert.equal(res.status, 200, `an admin key may change ${field}: ${await res.clone().text()}`);
    }
  });

  test('UI: an editor sees the deciding fields disabled, is refused with the error on the form; an admin may', async () => {
    const { bound, free } = await createPair();
    const page = await (await editor.get(`/ui/links/${bound}`)).text();
    for (const name of ['url', 'status', 'redirectStatus', 'expiresAt', 'expiredUrl']) {
      assert.match(page, new RegExp(`<(input|select)[^>]*name="${name}"[^>]*disabled`), `${name} disabled`);
    }
    assert.doesNotMatch(page, /<input[^>]*name="tags"[^>]*disabled/, 'tags stay editable');
    const freePage = await (await editor.get(`/ui/links/${free}`)).text();
    assert.doesNotMatch(freePage, /name="url"[^>]*disabled/, 'an ordinary link is the editor’s');

    // What a browser sends for that form: the disabled fields are left out. Saving tags works.
    await editor.get(`/ui/links/${bound}`);
    const saved = await editor.post(`/ui/links/${bound}/edit`, {
      title: '',
      tags: 'politics',
      reason: 'tagging',
    });
    assert.equal(saved.status, 303, await saved.clone().text());
    assert.match(saved.headers.get('Location') ?? '', /saved=1/);

    const before = await rowOf(bound);
    const base = {
      url: before.targetUrl,
      title: '',
      status: 'active',
      redirectStatus: '',
      expiresAt: '',
      expiredUrl: '',
      tags: 'politics',
      reason: 'a try',
    };
    const forged: [string, Record<string, string>][] = [
      ['url', { url: 'https://elsewhere.example/hijack' }],
      ['status', { status: 'gone' }],
      ['expiresAt', { expiresAt: '2099-01-01T10:00' }],
      ['expiredUrl', { expiredUrl: 'https://elsewhere.example/after-expiry' }],
      ['redirectStatus', { redirectStatus: '301' }],
    ];
    for (const [field, change] of forged) {
      await editor.get(`/ui/links/${bound}`);
      const res = await editor.post(`/ui/links/${bound}/edit`, { ...base, ...change });
      assert.equal(res.status, 403, `${field}: ${res.status}`);
      const html = await res.text();
      assert.match(html, /role="alert"/, `${field}: the form shows the error`);
      assert.match(html, new RegExp(`href="#field-${field}"`), `${field}: the error names the field`);
    }
    assert.deepEqual(await rowOf(bound), before, 'nothing changed');

    for (const [field, change] of forged) {
      await admin.get(`/ui/links/${bound}`);
      const res = await admin.post(`/ui/links/${bound}/edit`, { ...base, ...change, reason: 'admin' });
      assert.equal(
        res.status,
        303,
        `an admin may change ${field}: ${res.status} ${await res.clone().text()}`,
      );
    }
    const adminPage = await (await admin.get(`/ui/links/${bound}`)).text();
    assert.doesNotMatch(adminPage, /name="url"[^>]*disabled/, 'an admin edits every field');
  });
});
