import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { CSV_MAX_BYTES } from '../../lib/retarget/retarget_rule.ts';
import { canonicalizeTarget } from '../../lib/targets/canonical_url.ts';
import { createCanonicalTargetPolicy, targetRuleProblem } from '../../lib/targets/target_rule.ts';
import {
  HOSTILE_POLICY,
  HOSTILE_STRINGS,
  HOSTILE_TARGETS,
  hostileStringArbitrary,
  mutatedTargetUrlArbitrary,
  targetUrlArbitrary,
} from '../helpers/hostile_inputs.ts';

// The hostile-input suite for mass retargets: every way a rule enters (CSV rows, prefix and regex rules) driven
// through the real API with the shared corpus (tests/helpers/hostile_inputs.ts) and seeded fast-check strings.
// A CSV row's new URL gets exactly the verdict every other way in gives it (stored canonical, or named in a
// 422); rule text never answers 5xx; and what a prefix or regex rewrite makes of stored targets is planned only
// when it passes the target rules (canonical, allowed), otherwise left invalid and never applied.
// HOSTILE_SEED=<n> reruns a seed; HOSTILE_E2E_RUNS=<n> changes the generated count per channel.

const SEED = Number(process.env.HOSTILE_SEED ?? 13_2026);
const RUNS = Math.max(50, Number(process.env.HOSTILE_E2E_RUNS ?? 100));
const policy = createCanonicalTargetPolicy(HOSTILE_POLICY);

let h: Harness;
before(async () => {
  h = await createHarness({
    env: {
      SHORT_BASE_URL: HOSTILE_POLICY.shortBaseUrl,
      ALLOWED_TARGET_HOSTS: HOSTILE_POLICY.allowedTargetHosts.join(','),
    },
  });
  await h.startWorker();
});
after(async () => {
  await h?.close();
});

class Tally {
  cases = 0;
  accepted = 0;
  refused = 0;
  constructor(readonly channel: string) {}
  count(status: number, what: string) {
    this.cases++;
    assert.ok(status < 500, `${this.channel}: ${what} answered ${status}`);
    if (status === 202) this.accepted++;
    else this.refused++;
  }
  toString() {
    return `${this.channel}: ${this.cases} cases, ${this.accepted} accepted, ${this.refused} refused, 5xx = 0`;
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const show = (s: string) => JSON.stringify(s.length > 100 ? `${s.slice(0, 100)}…` : s);
/** One RFC 4180 field, quoted (so commas and quotes in the value stay in it). */
const quoted = (s: string) => `"${s.replace(/"/g, '""')}"`;

async function postRule(rule: Record<string, unknown>) {
  const res = await h.api('/api/v1/retargets', { method: 'POST', json: { rule } });
  const body = (await res.json()) as {
    id?: string;
    detail?: string;
    errors?: { path: string; message: string }[];
  };
  if (res.status !== 202) {
    assert.equal(res.headers.get('Content-Type'), 'application/problem+json', show(JSON.stringify(body)));
  }
  return { status: res.status, body };
}

async function waitPlanned(id: string) {
  return eventually(
    async () => {
      const run = (await (await h.api(`/api/v1/retargets/${id}`)).json()) as {
        status: string;
        report: { planned?: number; invalid?: number };
      };
      return run.status === 'planned' ? run : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `run ${id} planned` },
  );
}

describe('hostile retarget rules and CSV', () => {
  test('CSV rows: each hand-written destination gets the verdict it gets everywhere else', async (t) => {
    const tally = new Tally('retarget CSV new URL (corpus)');
    for (const [i, c] of HOSTILE_TARGETS.entries()) {
      const csv = `https://news.example/old/${i},${quoted(c.input)}\n`;
      const { status, body } = await postRule({ type: 'csv', csv });
      tally.count(status, show(c.input));
      const what = `${show(c.input)} (${c.why})`;
      if (c.expect.kind === 'accept') {
        assert.equal(status, 202, `${what}: ${JSON.stringify(body)}`);
        const [pair] = await h.db.sql<{ newUrl: string }[]>`
          SELECT new_url AS "newUrl" FROM retarget_pairs WHERE run_id = ${body.id!}`;
        assert.equal(pair?.newUrl, c.expect.url, what);
        await h.api(`/api/v1/retargets/${body.id}/cancel`, { method: 'POST' });
      } else {
        assert.equal(status, 422, `${what}: accepted`);
        const messages = (body.errors ?? []).map((e) => e.message).join(' | ');
        // An empty field is the CSV's own refusal; a NUL character is every body's, and a lone surrogate every
        // rule text's, before any URL rule.
        const expected =
          c.input === ''
            ? /both URLs are required/
            : c.input.includes('\u0000')
              ? /NUL character/
              : LONE_SURROGATE.test(c.input)
                ? /valid Unicode text/
                : c.expect.problem;
        assert.match(messages, expected, what);
      }
    }
    t.diagnostic(tally.toString());
  });

  test('CSV bodies and rule text: generated and hand-written strings are a 202 or a 4xx problem, never a 5xx', async (t) => {
    const csvTally = new Tally('retarget CSV body (generated)');
    const rows = fc.sample(
      fc.tuple(
        fc.oneof(targetUrlArbitrary(), hostileStringArbitrary()),
        fc.oneof(targetUrlArbitrary(), mutatedTargetUrlArbitrary(), hostileStringArbitrary()),
        fc.constantFrom(',', ';', '\n', '\r\n', ',,', '"'),
      ),
      { seed: SEED + 71, numRuns: RUNS },
    );
    for (const [oldUrl, newUrl, separator] of rows) {
      const { status, body } = await postRule({ type: 'csv', csv: `${oldUrl}${separator}${newUrl}` });
      csvTally.count(status, show(`${oldUrl}${separator}${newUrl}`));
      if (status === 202) {
        // Whatever was accepted is stored canonical and allowed.
        const pairs = await h.db.sql<{ newUrl: string }[]>`
          SELECT new_url AS "newUrl" FROM retarget_pairs WHERE run_id = ${body.id!}`;
        for (const p of pairs) {
          const canonical = canonicalizeTarget(p.newUrl);
          assert.ok(canonical.ok && canonical.url === p.newUrl, `not canonical: ${show(p.newUrl)}`);
          assert.equal(targetRuleProblem(p.newUrl, policy), null, show(p.newUrl));
        }
        await h.api(`/api/v1/retargets/${body.id}/cancel`, { method: 'POST' });
      }
    }
    t.diagnostic(csvTally.toString());

    const ruleTally = new Tally('retarget prefix and regex text (corpus + generated)');
    const texts = [
      ...HOSTILE_STRINGS.map((s) => s.value),
      ...fc.sample(hostileStringArbitrary(), { seed: SEED + 72, numRuns: RUNS }),
    ];
    for (const [i, text] of texts.entries()) {
      const rules = [
        { type: 'prefix', from: `https://news.example/none-${i}/${text}`, to: text },
        { type: 'regex', pattern: text, replacement: text },
        { type: 'csv', csv: text },
      ];
      for (const rule of rules) {
        const { status, body } = await postRule(rule);
        ruleTally.count(status, `${rule.type} ${show(text)}`);
        if (status === 202) await h.api(`/api/v1/retargets/${body.id}/cancel`, { method: 'POST' });
      }
    }
    t.diagnostic(ruleTally.toString());
  });

  test('a CSV past its cap is refused (422), a body past the API cap before it is read whole (413)', async () => {
    const over = `https://news.example/a,${'https://news.example/b'.padEnd(CSV_MAX_BYTES, 'b')}`;
    const tooBig = await postRule({ type: 'csv', csv: over });
    assert.equal(tooBig.status, 422);
    assert.match(JSON.stringify(tooBig.body), /1 MiB at most/);
    const body = JSON.stringify({ rule: { type: 'csv', csv: 'x'.repeat(3 * CSV_MAX_BYTES) } });
    const res = await h.api('/api/v1/retargets', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    assert.equal(res.status, 413, await res.clone().text());
  });

  test('rewrites that make hostile targets are planned invalid and never applied', async (t) => {
    // Backslashes and dollars are replacement syntax; line breaks cannot be in a stored target to match.
    const hostile = HOSTILE_TARGETS.filter((c) => c.expect.kind !== 'accept' && !/[\r\n\\$]/.test(c.input));
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT 'hx' || i, 'https://news.example/hx/' || i, 'active', 'clean', 'api', 'test'
      FROM generate_series(1, 3) AS i`;
    let invalid = 0;
    // A regex rewrite of https://news.example/hx/N to each hostile destination.
    for (const c of hostile.slice(0, 20)) {
      const { status, body } = await postRule({
        type: 'regex',
        pattern: '^https://news\\.example/hx/.*$',
        replacement: c.input,
      });
      assert.equal(status, 202, JSON.stringify(body));
      const run = await waitPlanned(body.id!);
      assert.equal(run.report.planned ?? 0, 0, `${show(c.input)} (${c.why}) was planned`);
      invalid += run.report.invalid ?? 0;
      await h.api(`/api/v1/retargets/${body.id}/cancel`, { method: 'POST' });
    }
    const rows = await h.db.sql<{ url: string }[]>`
      SELECT target_url AS url FROM links WHERE code LIKE 'hx%' ORDER BY code`;
    assert.deepEqual(
      rows.map((r) => r.url),
      ['https://news.example/hx/1', 'https://news.example/hx/2', 'https://news.example/hx/3'],
    );
    t.diagnostic(
      `retarget rewrites to hostile targets: ${Math.min(hostile.length, 20)} rules, ${invalid} invalid changes, 0 planned`,
    );
  });
});
