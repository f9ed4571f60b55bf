import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import fastUri from 'fast-uri';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import { canonicalizeTarget } from '../../lib/targets/canonical_url.ts';
import { createCanonicalTargetPolicy, targetRuleProblem } from '../../lib/targets/target_rule.ts';
import {
  HOSTILE_POLICY,
  HOSTILE_STRINGS,
  HOSTILE_TARGETS,
  hostileStringArbitrary,
  mutatedTargetUrlArbitrary,
  targetUrlArbitrary,
  webUrlArbitrary,
} from '../helpers/hostile_inputs.ts';
import { createUiClient, type UiClient } from '../helpers/ui_client.ts';

// The hostile-input suite: every way a destination or free text enters Lifeline, driven through the
// real app (API, UI forms and the live check, signed WordPress webhooks, reader reports, list and query
// parameters) with the shared corpus (tests/helpers/hostile_inputs.ts) and fast-check generators, seeded.
// Whatever is accepted is canonical, allowed, and read alike by WHATWG and an RFC 3986 parser (fast-uri);
// whatever is refused is a 4xx problem; nothing answers 5xx. Counts go to the test output (t.diagnostic).
// HOSTILE_SEED=<n> reruns a seed; HOSTILE_E2E_RUNS=<n> changes the generated count per channel.

const SEED = Number(process.env.HOSTILE_SEED ?? 13_2026);
const RUNS = Math.max(50, Number(process.env.HOSTILE_E2E_RUNS ?? 150));
const policy = createCanonicalTargetPolicy(HOSTILE_POLICY);

let h: Harness;
let ui: UiClient;

before(async () => {
  h = await createHarness({
    env: {
      SHORT_BASE_URL: HOSTILE_POLICY.shortBaseUrl,
      ALLOWED_TARGET_HOSTS: HOSTILE_POLICY.allowedTargetHosts.join(','),
      TRUSTED_CLIENT_IP_HEADER: 'X-Test-Client-IP',
      RATE_LIMIT_CREATE_PER_MINUTE: '1000000',
      RATE_LIMIT_CREATE_PER_IP_PER_MINUTE: '1000000',
      RATE_LIMIT_REPORTS_PER_HOUR: '1000000',
      RATE_LIMIT_LOGIN_PER_IP: '1000000',
      RATE_LIMIT_LOGIN_PER_ACCOUNT: '1000000',
    },
  });
  ui = createUiClient(h.app as never);
  assert.equal((await ui.login('admin@example.test', 'correct horse battery')).status, 303);
});
after(async () => {
  await h?.close();
});

/** Tallies of one channel, printed at the end of its test. */
class Tally {
  cases = 0;
  accepted = 0;
  refused = 0;
  serverErrors = 0;
  constructor(readonly channel: string) {}
  count(status: number, accepted: boolean, what: string) {
    this.cases++;
    if (status >= 500) {
      this.serverErrors++;
      assert.fail(`${this.channel}: ${what} answered ${status}`);
    }
    if (accepted) this.accepted++;
    else this.refused++;
  }
  toString() {
    return `${this.channel}: ${this.cases} cases, ${this.accepted} accepted, ${this.refused} refused, 5xx = ${this.serverErrors}`;
  }
}

/** What a browser sends for a string with lone surrogates: each one as U+FFFD. */
const wellFormed = (s: string) =>
  s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

const show = (s: string) => JSON.stringify(s.length > 100 ? `${s.slice(0, 100)}…` : s);

/** The destinations every channel tries: the hand-written corpus, then seeded generated ones. */
function destinations(offset: number, runs = RUNS): string[] {
  const generated = fc.sample(
    fc.oneof(targetUrlArbitrary(), mutatedTargetUrlArbitrary(), webUrlArbitrary()),
    {
      seed: SEED + offset,
      numRuns: runs,
    },
  );
  return [...HOSTILE_TARGETS.map((c) => c.input), ...generated];
}

/** What every accepted destination must be: canonical, allowed, and the same host to WHATWG and RFC 3986. */
function assertServable(input: string, stored: string) {
  const what = `${show(input)} stored as ${show(stored)}`;
  const canonical = canonicalizeTarget(input);
  assert.ok(canonical.ok, `${what}: accepted without a canonical form`);
  assert.equal(stored, canonical.url, `${what}: not the canonical form`);
  assert.equal(targetRuleProblem(stored, policy), null, `${what}: breaks the target rule`);
  const whatwg = new URL(stored);
  const rfc = fastUri.parse(stored);
  assert.equal(rfc.error, undefined, `${what}: fast-uri: ${rfc.error}`);
  assert.equal(whatwg.username + whatwg.password, '', `${what}: WHATWG userinfo`);
  assert.equal(rfc.userinfo, undefined, `${what}: RFC 3986 userinfo`);
  assert.equal(rfc.host?.toLowerCase(), whatwg.hostname.replace(/^\[(.*)\]$/, '$1'), `${what}: hosts differ`);
  assert.ok(
    whatwg.hostname === 'news.example' || whatwg.hostname.endsWith('.news.example'),
    `${what}: host ${whatwg.hostname} is not allowed`,
  );
}

describe('hostile destinations through every way in', () => {
  test('the API (create; its redirect answers with exactly the stored target)', async (t) => {
    const tally = new Tally('API POST /api/v1/links');
    for (const input of destinations(1)) {
      const res = await h.api('/api/v1/links', { method: 'POST', json: { url: input } });
      const body = (await res.json()) as { code?: string; url?: string; errors?: { path: string }[] };
      tally.count(res.status, res.status === 201 || res.status === 200, show(input));
      if (res.status === 201 || res.status === 200) {
        assertServable(input, body.url!);
        const answer = await h.app.request(`/${body.code}`, { headers: { Host: 'sho.rt' } });
        assert.ok(
          answer.status === 301 || answer.status === 200,
          `${show(input)}: answered ${answer.status}`,
        );
        if (answer.status === 301) assert.equal(answer.headers.get('Location'), body.url);
      } else if (res.status === 413) {
        assert.ok(input.length > 60_000, `${show(input)}: 413 for a small body`);
      } else {
        assert.ok([400, 422].includes(res.status), `${show(input)}: ${res.status}`);
        assert.ok(
          body.errors?.some((e) => e.path === 'url'),
          `${show(input)}: no field error for url`,
        );
      }
    }
    t.diagnostic(tally.toString());
    assert.ok(tally.cases >= 300 && tally.accepted > 0 && tally.refused > 0);
  });

  test('the UI form and its live check agree with the API', async (t) => {
    const tally = new Tally('UI POST /ui/links/new');
    const checks = new Tally('UI GET /ui/api/check');
    await ui.get('/ui/links/new');
    const csrf = ui.csrf()!;
    for (const input of destinations(2)) {
      // A browser sends a lone surrogate as U+FFFD; anything else goes as typed.
      const check = await ui.get(`/ui/api/check?field=url&value=${encodeURIComponent(wellFormed(input))}`);
      // 200 with the verdict, or a 400 problem for a NUL character (refused before any route).
      const verdict = check.status === 200 ? ((await check.json()) as { ok: boolean }) : { ok: false };
      checks.count(check.status, verdict.ok, show(input));
      const res = await ui.post('/ui/links/new', { url: wellFormed(input) }, { csrf });
      tally.count(res.status, res.status === 303, show(input));
      // The form trims what was typed, as the live check does: the check's verdict is the form's.
      assert.equal(
        verdict.ok,
        res.status === 303,
        `${show(input)}: live check ${verdict.ok}, form ${res.status}`,
      );
      if (res.status === 303) {
        const code = decodeURIComponent(/\/ui\/links\/([^?]+)/.exec(res.headers.get('Location')!)![1]!);
        const [row] = await h.db.sql<
          { url: string }[]
        >`SELECT target_url AS url FROM links WHERE code = ${code}`;
        assertServable(wellFormed(input).trim(), row!.url);
      } else {
        assert.ok(
          res.status === 422 ||
            (res.status === 413 && input.length > 60_000) ||
            (res.status === 400 && input.includes('\u0000')),
          `${show(input)}: ${res.status}`,
        );
      }
    }
    t.diagnostic(tally.toString());
    t.diagnostic(checks.toString());
  });

  test('WordPress permalinks (signed webhooks): accepted ones reach the workflow canonical and allowed', async (t) => {
    const tally = new Tally('WordPress webhook permalinks');
    let postId = 100_000;
    for (const input of destinations(3, 100)) {
      postId++;
      const res = await h.webhook({
        id: `hostile-${postId}`,
        event: 'post.published',
        site: 'hostile',
        postId,
        permalink: input,
        title: 'A story',
        occurredAt: new Date().toISOString(),
      });
      tally.count(res.status, res.status === 202, show(input));
      if (res.status !== 202) {
        assert.ok(res.status === 400 || (res.status === 413 && input.length > 60_000), `${show(input)}`);
        continue;
      }
      const { workflowId } = (await res.json()) as { workflowId: string };
      const history = await h.temporal.client.workflow.getHandle(workflowId).fetchHistory();
      const permalinks = (history.events ?? []).flatMap((e) =>
        [
          ...(e.workflowExecutionStartedEventAttributes?.input?.payloads ?? []),
          ...(e.workflowExecutionSignaledEventAttributes?.input?.payloads ?? []),
        ].flatMap((p) => [
          ...Buffer.from(p.data ?? [])
            .toString('utf8')
            .matchAll(/"permalink":("(?:[^"\\]|\\.)*")/g),
        ]),
      );
      assert.ok(permalinks.length > 0, `${show(input)}: no permalink in ${workflowId}`);
      for (const m of permalinks) assertServable(input, JSON.parse(m[1]!) as string);
    }
    t.diagnostic(tally.toString());
  });
});

describe('hostile webhook bodies, signatures and timestamps', () => {
  test('signed hostile bodies are 202 or a 400 problem; unsigned, stale or forged ones are 401', async (t) => {
    const bodies = new Tally('webhook bodies (signed)');
    const field = hostileStringArbitrary();
    const value = fc.oneof(
      field,
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(field, { maxLength: 3 }),
      fc.dictionary(field, field, { maxKeys: 3 }),
    );
    const event = fc.record(
      {
        id: fc.oneof(field, fc.uuid()),
        event: fc.oneof(fc.constantFrom('post.published', 'post.updated', 'post.unpublished'), field),
        site: fc.oneof(fc.constantFrom('hostile', 'news'), field),
        postId: fc.oneof(fc.integer({ min: -5, max: 2 ** 53 + 10 }), value),
        permalink: fc.oneof(fc.constantFrom(...HOSTILE_TARGETS.map((c) => c.input)), field, value),
        title: fc.oneof(field, value),
        occurredAt: fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          field,
          value,
        ),
      },
      { requiredKeys: [] },
    );
    // Well-formed events carrying hostile text and destinations: these get through when the values are fine.
    let validPost = 200_000;
    const wellFormedEvent = fc
      .record({
        event: fc.constantFrom('post.published', 'post.updated', 'post.unpublished'),
        permalink: fc.constantFrom(...HOSTILE_TARGETS.map((c) => c.input)),
        title: field,
      })
      .map((e) => ({
        ...e,
        id: `wf-${++validPost}`,
        site: 'hostile',
        postId: validPost,
        occurredAt: new Date().toISOString(),
      }));
    const raws = [
      ...fc.sample(event, { seed: SEED + 4, numRuns: RUNS }).map((e) => JSON.stringify(e)),
      ...fc.sample(wellFormedEvent, { seed: SEED + 11, numRuns: 60 }).map((e) => JSON.stringify(e)),
      ...fc.sample(fc.string({ unit: 'binary', maxLength: 200 }), { seed: SEED + 5, numRuns: 40 }),
      ...HOSTILE_STRINGS.map((s) => s.value),
      '[]',
      'null',
      '{"__proto__":{"polluted":true},"id":"x"}',
      `{"id":"${'x'.repeat(70_000)}"}`,
    ];
    for (const raw of raws) {
      const res = await h.webhook(undefined, { rawBody: raw });
      bodies.count(res.status, res.status === 202, show(raw));
      assert.ok([202, 400, 413, 415].includes(res.status), `${show(raw)}: ${res.status}`);
      if (res.status !== 202) assert.match(res.headers.get('Content-Type') ?? '', /problem\+json/);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
    t.diagnostic(bodies.toString());

    const signatures = new Tally('webhook signatures and timestamps');
    const body = JSON.stringify({
      id: 'sig-1',
      event: 'post.unpublished',
      site: 'hostile',
      postId: 1,
      occurredAt: new Date().toISOString(),
    });
    const now = Math.floor(Date.now() / 1000);
    const good = await signWebhook(h.webhookSecret, body, now);
    const hmac = good.split('v1=')[1]!;
    const headers = [
      ...fc.sample(hostileStringArbitrary(), { seed: SEED + 6, numRuns: 60 }),
      '',
      `t=${now}`,
      `v1=${hmac}`,
      // The last digit changed (to 0, or to 1 when it is 0: one run in sixteen signed a valid header here).
      `t=${now},v1=${hmac.slice(0, -1)}${hmac.endsWith('0') ? '1' : '0'}`,
      `t=${now},v1=${hmac.toUpperCase().replace(/.$/, 'X')}`,
      `t=${now - 400},v1=${(await signWebhook(h.webhookSecret, body, now - 400)).split('v1=')[1]}`,
      `t=${now + 400},v1=${(await signWebhook(h.webhookSecret, body, now + 400)).split('v1=')[1]}`,
      `t=${now}.5,v1=${hmac}`,
      `t=-${now},v1=${hmac}`,
      `t=${'9'.repeat(20)},v1=${hmac}`,
      `t=0x${now.toString(16)},v1=${hmac}`,
      `t=${now},v1=${(await signWebhook('another secret entirely', body, now)).split('v1=')[1]}`,
      `t=${now},v0=${hmac}`,
      `t=${now},v1=${hmac.slice(0, 32)}`,
      `${good}\r\nX-Injected: 1`.replace(/[\r\n]/g, ''),
    ];
    for (const header of headers) {
      let res: Response;
      try {
        res = await h.app.request('/api/v1/hooks/wordpress', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Lifeline-Signature': header },
          body,
        });
      } catch {
        continue; // a header value fetch itself refuses (control characters) never reaches the server
      }
      signatures.count(res.status, res.status === 202, show(header));
      assert.equal(res.status, 401, `${show(header)}: ${res.status}`);
    }
    // Inside the replay window (300 s either way) is accepted; 400 s out is not (above).
    for (const skew of [-290, 290]) {
      const signed = await signWebhook(
        h.webhookSecret,
        body.replace('sig-1', `sig-${skew}`),
        Math.floor(Date.now() / 1000) + skew,
      );
      const res = await h.app.request('/api/v1/hooks/wordpress', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Lifeline-Signature': signed },
        body: body.replace('sig-1', `sig-${skew}`),
      });
      signatures.count(res.status, res.status === 202, `skew ${skew}`);
      assert.equal(res.status, 202, `skew ${skew}`);
    }
    t.diagnostic(signatures.toString());
  });
});

describe('hostile query parameters, form posts and report posts', () => {
  const hostilePairs = fc.array(fc.tuple(hostileStringArbitrary(), hostileStringArbitrary()), {
    maxLength: 5,
  });
  const query = (pairs: [string, string][], known: string[]) =>
    new URLSearchParams(pairs.map(([k, v], i) => [i % 2 === 0 ? known[i % known.length]! : k, v])).toString();

  test('list and query parameters: API, UI, stats and the report queue answer 2xx or a 4xx, never 5xx', async (t) => {
    const tally = new Tally('list/query parameters');
    const code = (
      (await (
        await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://news.example/q' } })
      ).json()) as { code: string }
    ).code;
    const known = ['q', 'status', 'safety', 'origin', 'tag', 'site', 'sort', 'cursor', 'limit', 'from', 'to'];
    for (const pairs of fc.sample(hostilePairs, { seed: SEED + 7, numRuns: RUNS })) {
      const qs = query(pairs, known);
      for (const path of [
        `/api/v1/links?${qs}`,
        `/api/v1/links/${code}/stats?${qs}`,
        `/api/v1/reports?${qs}`,
        `/api/v1/ops/runs?${qs}`,
        `/api/v1/blocklist?${qs}`,
      ]) {
        const res = await h.api(path);
        tally.count(res.status, res.status < 300, path);
        assert.ok(res.status < 300 || [400, 404, 422].includes(res.status), `${path}: ${res.status}`);
      }
      for (const path of [
        `/ui/links?${qs}`,
        `/ui/reports?${qs}`,
        `/ui/links/${code}?${qs}`,
        `/ui/login?${qs}`,
      ]) {
        const res = await ui.get(path);
        tally.count(res.status, res.status < 400, path);
        assert.ok(res.status < 400 || [400, 404, 422].includes(res.status), `${path}: ${res.status}`);
      }
    }
    t.diagnostic(tally.toString());
  });

  test('form posts with hostile fields: create, edit, delete, moderation and login are 2xx/3xx or a 4xx page', async (t) => {
    const tally = new Tally('form posts');
    const code = (
      (await (
        await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://news.example/form' } })
      ).json()) as { code: string }
    ).code;
    const s = hostileStringArbitrary();
    const form = fc.record(
      {
        url: fc.oneof(fc.constantFrom(...HOSTILE_TARGETS.map((c) => c.input)), s),
        alias: s,
        expiresAt: fc.oneof(
          s,
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 16)),
        ),
        expiredUrl: fc.oneof(fc.constantFrom(...HOSTILE_TARGETS.map((c) => c.input)), s),
        redirectStatus: fc.oneof(s, fc.constantFrom('301', '302', '307', '308', '200', '-1')),
        tags: s,
        status: fc.oneof(s, fc.constantFrom('active', 'gone', 'blocked')),
        reason: s,
        version: s,
        confirm: s,
        action: fc.oneof(s, fc.constantFrom('dismiss', 'confirm', 'ignore')),
        note: s,
        email: s,
        password: s,
        next: s,
      },
      { requiredKeys: [] },
    );
    for (const fields of fc.sample(form, { seed: SEED + 8, numRuns: RUNS })) {
      for (const path of ['/ui/links/new', `/ui/links/${code}/edit`, `/ui/reports/${code}`, '/ui/login']) {
        await ui.get(
          path === '/ui/login'
            ? '/ui/login'
            : path.startsWith('/ui/reports')
              ? '/ui/reports'
              : `/ui/links/${code}`,
        );
        const res = await ui.post(path, fields as Record<string, string>);
        tally.count(res.status, res.status < 400, `${path} ${JSON.stringify(fields).slice(0, 200)}`);
        assert.ok(res.status < 500, `${path}: ${res.status}`);
      }
      // The login form may have signed the client out (a hostile `next`, or another account): sign in again.
      if ((await ui.get('/ui/links')).status !== 200) {
        assert.equal((await ui.login('admin@example.test', 'correct horse battery')).status, 303);
      }
    }
    // The delete form with a hostile confirmation never deletes: the code must be typed exactly.
    for (const confirm of fc.sample(hostileStringArbitrary(), { seed: SEED + 9, numRuns: 30 })) {
      await ui.get(`/ui/links/${code}`);
      const res = await ui.post(`/ui/links/${code}/delete`, { confirm });
      tally.count(res.status, res.status < 400, `delete ${show(confirm)}`);
      if (confirm.trim() !== code) assert.ok(res.status === 422 || res.status === 400, show(confirm));
    }
    t.diagnostic(tally.toString());
  });

  test('report posts with hostile bodies, types and origins are 202 or a 4xx, never 5xx', async (t) => {
    const tally = new Tally('report posts');
    const code = (
      (await (
        await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://news.example/reported' } })
      ).json()) as { code: string }
    ).code;
    const s = hostileStringArbitrary();
    const request = fc.record({
      path: fc.oneof(fc.constant(code), fc.constant('NoSuchCode1'), s),
      type: fc.oneof(
        fc.constantFrom(
          'application/json',
          'application/x-www-form-urlencoded',
          'multipart/form-data',
          'text/plain',
        ),
        s,
      ),
      body: fc.oneof(
        s.map((reason) => JSON.stringify({ reason })),
        s.map((reason) => new URLSearchParams({ reason }).toString()),
        fc.string({ unit: 'binary', maxLength: 300 }),
        s,
      ),
      origin: fc.option(fc.oneof(fc.constantFrom('https://sho.rt', 'https://evil.example', 'null'), s), {
        nil: undefined,
      }),
      ip: fc.oneof(fc.ipV4(), fc.ipV6(), s),
    });
    for (const r of fc.sample(request, { seed: SEED + 10, numRuns: RUNS * 2 })) {
      const headers: Record<string, string> = { 'X-Test-Client-IP': r.ip };
      if (/^[\x20-\x7e]*$/.test(r.type)) headers['Content-Type'] = r.type;
      if (r.origin !== undefined && /^[\x20-\x7e]*$/.test(r.origin)) headers.Origin = r.origin;
      if (!/^[\x20-\x7e]*$/.test(r.ip)) delete headers['X-Test-Client-IP'];
      let res: Response;
      try {
        res = await h.app.request(`/${encodeURIComponent(r.path)}/report`, {
          method: 'POST',
          headers,
          body: r.body,
        });
      } catch {
        continue;
      }
      tally.count(res.status, res.status === 202, `${show(r.path)} ${show(r.type)} ${show(r.body)}`);
      assert.ok(res.status === 202 || (res.status >= 400 && res.status < 500), `${res.status}`);
    }
    const [stored] = await h.db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM reports WHERE code = ${code}`;
    t.diagnostic(`${tally.toString()}; ${stored!.n} distinct reporters stored for the link`);
  });
});
