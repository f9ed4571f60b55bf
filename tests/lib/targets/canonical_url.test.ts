import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import fc from 'fast-check';
import fastUri from 'fast-uri';
import { appendUtmParams, toLocation } from '../../../lib/redirect/redirect_policy.ts';
import {
  CANONICAL_TARGET_MAX_BYTES,
  type CanonicalTarget,
  canonicalizeHost,
  canonicalizeTarget,
  TARGET_PROBLEMS,
} from '../../../lib/targets/canonical_url.ts';
import {
  checkTarget,
  createCanonicalTargetPolicy,
  hostMatches,
  isOwnShortHost,
  targetRuleProblem,
} from '../../../lib/targets/target_rule.ts';
import {
  anyStringArbitrary,
  canonicalTargetUrlArbitrary,
  HOSTILE_POLICY,
  HOSTILE_STRINGS,
  HOSTILE_TARGETS,
  type HostileTarget,
  hostileStringArbitrary,
  mutatedTargetUrlArbitrary,
  REVIEW_FINDINGS,
  targetUrlArbitrary,
  webUrlArbitrary,
} from '../../helpers/hostile_inputs.ts';
import {
  createLegacyTargetPolicy as createTargetPolicy,
  legacyTargetPolicyProblem as targetPolicyProblem,
  legacyTargetUrlProblem as targetUrlProblem,
} from '../../helpers/legacy_target_rules.ts';

// Whatever canonicalizeTarget accepts, every parser we can run (WHATWG in Node and in Deno, fast-uri for
// RFC 3986, Python's urllib.parse.urlsplit) reads the same scheme, host and port, and no userinfo; the form is
// a fixed point; the policy holds. Hand-written cases carry their verdicts (tests/helpers/hostile_inputs.ts);
// generated ones are seeded: HOSTILE_SEED=<n> reruns a failure, HOSTILE_RUNS=<n> changes the count.

const SEED = Number(process.env.HOSTILE_SEED ?? 13_2026);
const RUNS = Math.max(300, Number(process.env.HOSTILE_RUNS ?? 1000));
const parseRfc3986 = fastUri.parse;
const ROOT = join(import.meta.dirname, '..', '..', '..');
const policy = createCanonicalTargetPolicy(HOSTILE_POLICY);

/** Runs a seeded property; a failure names the seed, the shrunk counterexample and how to rerun it. */
function checkProperty<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => void, numRuns = RUNS): number {
  const details = fc.check(
    fc.property(arbitrary, (value) => {
      predicate(value);
    }),
    { seed: SEED, numRuns },
  );
  if (details.failed) {
    throw new Error(
      `property failed with seed ${SEED} (rerun: HOSTILE_SEED=${SEED}), path ${details.counterexamplePath}, ` +
        `counterexample ${JSON.stringify(details.counterexample)}: ${String(details.errorInstance)}`,
    );
  }
  return details.numRuns;
}

/** Seeded samples of an arbitrary, for the checks that run other processes once over a batch. */
function sampleOf<T>(arbitrary: fc.Arbitrary<T>, numRuns: number, offset = 0): T[] {
  return fc.sample(arbitrary, { seed: SEED + offset, numRuns });
}

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/** The guarantees for an accepted target, checked with WHATWG, fast-uri and Lifeline's own functions. */
function assertCanonical(input: string, result: CanonicalTarget & { ok: true }) {
  const what = `${JSON.stringify(input)} -> ${result.url}`;
  assert.match(result.url, PRINTABLE_ASCII, `${what}: printable ASCII only`);
  assert.ok(result.url.length <= CANONICAL_TARGET_MAX_BYTES, `${what}: size`);
  assert.deepEqual(canonicalizeTarget(result.url), result, `${what}: a fixed point`);
  // The same answer from the full path (an upper-case scheme never takes the shortcut for canonical strings).
  const upper = result.url.replace(/^https?/, (scheme) => scheme.toUpperCase());
  assert.deepEqual(canonicalizeTarget(upper), result, `${what}: the shortcut and the full path agree`);

  const whatwg = new URL(result.url);
  assert.equal(whatwg.href, result.url, `${what}: WHATWG serialises it unchanged`);
  assert.ok(whatwg.protocol === 'https:' || whatwg.protocol === 'http:', what);
  assert.equal(whatwg.hostname, result.hostname, `${what}: WHATWG host name`);
  assert.equal(whatwg.host, result.host, `${what}: WHATWG host`);
  assert.equal(whatwg.username + whatwg.password, '', `${what}: WHATWG userinfo`);
  assert.doesNotMatch(result.hostname, /\.$|\.\.|^\./, `${what}: no empty label or trailing dot`);

  const rfc = parseRfc3986(result.url);
  assert.equal(rfc.error, undefined, `${what}: fast-uri error ${rfc.error}`);
  assert.equal(`${rfc.scheme}:`, whatwg.protocol, `${what}: fast-uri scheme`);
  assert.equal(rfc.userinfo, undefined, `${what}: fast-uri userinfo`);
  assert.equal(rfc.host?.toLowerCase(), bare(result.hostname), `${what}: fast-uri host`);
  assert.equal(rfc.port === undefined ? '' : String(rfc.port), whatwg.port, `${what}: fast-uri port`);

  // What the redirect path sends: byte-exact, and UTM parameters cannot move the host.
  assert.equal(toLocation(result.url), result.url, `${what}: Location is the stored bytes`);
  const withUtm = appendUtmParams(result.url, 'utm_source=lifeline&utm_medium=short');
  assert.equal(new URL(withUtm).host, result.host, `${what}: host after UTM`);
  assert.equal(
    parseRfc3986(withUtm).host?.toLowerCase(),
    bare(result.hostname),
    `${what}: fast-uri host after UTM`,
  );
}

/** The full contract for one input: nothing throws; accepted means canonical and read alike; refused has a text. */
function assertContract(input: string): 'accepted' | 'off_policy' | 'refused' {
  const result = canonicalizeTarget(input);
  const checked = checkTarget(input, policy);
  if (!result.ok) {
    assert.ok(typeof result.problem === 'string' && result.problem.length > 0, JSON.stringify(input));
    assert.deepEqual(checked, result, `${JSON.stringify(input)}: checkTarget refuses the same way`);
    assert.equal(targetRuleProblem(input, policy), result.problem, JSON.stringify(input));
    return 'refused';
  }
  assertCanonical(input, result);
  const rule = targetRuleProblem(result.url, policy);
  assert.equal(rule, checked.ok ? null : checked.problem, `${result.url}: one rule, one answer`);
  if (result.url !== input) {
    assert.equal(targetRuleProblem(input, policy), TARGET_PROBLEMS.notCanonical, `${JSON.stringify(input)}`);
  }
  if (!checked.ok) return 'off_policy';
  assert.ok(hostMatches(result.hostname, HOSTILE_POLICY.allowedTargetHosts), `${result.url}: allowed host`);
  assert.ok(!isOwnShortHost(result.host, HOSTILE_POLICY.shortBaseUrl), `${result.url}: not our short domain`);
  return 'accepted';
}

function assertVerdict(c: HostileTarget) {
  const what = `${JSON.stringify(c.input.length > 120 ? `${c.input.slice(0, 120)}…` : c.input)} (${c.why})`;
  const result = canonicalizeTarget(c.input);
  const checked = checkTarget(c.input, policy);
  switch (c.expect.kind) {
    case 'accept':
      assert.ok(result.ok, `${what}: refused with "${result.ok ? '' : result.problem}"`);
      assert.equal(result.url, c.expect.url, what);
      assert.ok(checked.ok, `${what}: policy refused with "${checked.ok ? '' : checked.problem}"`);
      assert.equal(targetRuleProblem(result.url, policy), null, what);
      break;
    case 'off_policy':
      assert.ok(result.ok, `${what}: refused with "${result.ok ? '' : result.problem}"`);
      assert.equal(result.url, c.expect.url, what);
      assert.ok(!checked.ok, `${what}: the policy let it in`);
      assert.match(checked.problem, c.expect.problem, what);
      assert.equal(targetRuleProblem(result.url, policy), checked.problem, what);
      break;
    case 'refuse':
      assert.ok(!result.ok, `${what}: accepted as ${result.ok ? result.url : ''}`);
      assert.match(result.problem, c.expect.problem, what);
      break;
  }
  assertContract(c.input);
}

describe("the first security review's findings, verbatim", () => {
  test('a backslash before @ is refused: browsers and curl would go to different hosts', () => {
    const input = 'https://news.example\\@evil.example/';
    assert.equal(new URL(input).hostname, 'news.example'); // what the old check saw
    assert.equal(parseRfc3986(input).host, 'evil.example'); // what an RFC 3986 client sees
    assert.deepEqual(canonicalizeTarget(input), { ok: false, problem: TARGET_PROBLEMS.backslash });
    assert.equal(targetRuleProblem(input, policy), TARGET_PROBLEMS.backslash);
  });

  test('a trailing dot is dropped, so news.example. is news.example', () => {
    assert.deepEqual(canonicalizeTarget('https://news.example./x'), {
      ok: true,
      url: 'https://news.example/x',
      host: 'news.example',
      hostname: 'news.example',
    });
    assert.deepEqual(
      checkTarget('https://news.example./x', policy),
      canonicalizeTarget('https://news.example./x'),
    );
  });

  test('sho.rt. (and sho.rt.:443) is our own short domain', () => {
    for (const input of ['https://sho.rt./x', 'https://sho.rt.:443/x']) {
      const result = canonicalizeTarget(input);
      assert.ok(result.ok, input);
      assert.equal(result.url, 'https://sho.rt/x');
      assert.ok(isOwnShortHost(result.host, 'https://sho.rt'), input);
      assert.deepEqual(checkTarget(input, policy), { ok: false, problem: TARGET_PROBLEMS.ownHost });
    }
    // The old policy check let the first one through.
    const oldPolicy = createTargetPolicy({ allowedTargetHosts: [], shortBaseUrl: 'https://sho.rt' });
    assert.equal(targetPolicyProblem('https://sho.rt./x', oldPolicy), null);
    assert.equal(checkTarget('https://sho.rt./x', { ...policy, allowedHosts: [] }).ok, false);
  });

  test('each finding is in the shared corpus with its verdict', () => {
    for (const c of REVIEW_FINDINGS) assertVerdict(c);
  });
});

describe('hand-written hostile destinations', () => {
  test('every case gets its expected verdict and canonical form', (t) => {
    const counts = { accept: 0, off_policy: 0, refuse: 0 };
    for (const c of HOSTILE_TARGETS) {
      assertVerdict(c);
      counts[c.expect.kind]++;
    }
    assert.ok(HOSTILE_TARGETS.length >= 250, `${HOSTILE_TARGETS.length} cases`);
    assert.equal(new Set(HOSTILE_TARGETS.map((c) => c.input)).size, HOSTILE_TARGETS.length, 'no duplicates');
    t.diagnostic(
      `${HOSTILE_TARGETS.length} hand-written: ${counts.accept} accepted, ${counts.off_policy} canonical but off policy, ${counts.refuse} refused`,
    );
  });

  test('already canonical URLs (WordPress permalinks, plain queries) come out byte-identical', () => {
    for (const url of [
      'https://news.example/%d8%a7%d9%84-story/',
      'https://news.example/?a=1&b=%2F',
      'https://news.example/2024/05/01/a-story/?utm_source=x#comments',
    ]) {
      assert.equal((canonicalizeTarget(url) as { url: string }).url, url);
      assert.equal(targetRuleProblem(url, policy), null, url);
    }
  });

  test('hostile free text is refused as a destination, and nothing throws', () => {
    for (const { value, why } of HOSTILE_STRINGS) {
      const result = canonicalizeTarget(value);
      assert.ok(!result.ok, `${why}: accepted`);
      assert.ok(result.problem.length > 0, why);
    }
  });

  test('refusal texts read as zod messages: lower case, no trailing period, never the secret parts of a URL', () => {
    for (const problem of Object.values(TARGET_PROBLEMS)) {
      assert.match(problem, /^[a-z]/, problem);
      assert.doesNotMatch(problem, /\.$/, problem);
    }
    const result = canonicalizeTarget('https://editor:hunter2@news.example/');
    assert.ok(!result.ok);
    assert.doesNotMatch(result.problem, /hunter2|editor/);
  });
});

describe('generated destinations (fast-check, seeded)', () => {
  const totals = { accepted: 0, off_policy: 0, refused: 0 };

  /** Runs the contract over one generator, reporting and returning how its inputs fared. */
  function checkGenerated(t: TestContext, arbitrary: fc.Arbitrary<string>, extra?: (value: string) => void) {
    const tally = { accepted: 0, off_policy: 0, refused: 0 };
    const runs = checkProperty(arbitrary, (value) => {
      tally[assertContract(value)]++;
      extra?.(value);
    });
    assert.ok(runs >= 300, `${runs} runs`);
    for (const key of Object.keys(tally) as (keyof typeof tally)[]) totals[key] += tally[key];
    t.diagnostic(
      `seed ${SEED}: ${runs} generated, ${tally.accepted} accepted, ${tally.off_policy} canonical but off policy, ${tally.refused} refused`,
    );
    return tally;
  }

  test('assembled from hostile pieces: accepted means every parser agrees, allowed, fixed point', (t) => {
    const tally = checkGenerated(t, targetUrlArbitrary());
    assert.ok(tally.accepted + tally.off_policy >= 100, 'enough canonical outputs to check the parsers on');
  });

  test('with a hostile character inserted anywhere', (t) => {
    const tally = checkGenerated(t, mutatedTargetUrlArbitrary());
    assert.ok(tally.accepted + tally.off_policy >= 100, 'enough canonical outputs to check the parsers on');
  });

  test("fast-check's valid web URLs with userinfo, ports and every IP form", (t) => {
    const tally = checkGenerated(t, webUrlArbitrary());
    assert.ok(tally.accepted + tally.off_policy >= 300, 'enough canonical outputs to check the parsers on');
  });

  test('mixed-case, unicode-dotted and subdomain spellings of the allowed host stay on it', (t) => {
    const spelled = fc
      .tuple(
        fc.constantFrom('https://', 'HTTPS://', 'http://', 'HtTp://'),
        fc.array(fc.constantFrom('www', 'a-b', 'x_y', 'münchen', '😀', 'ｎｅｗｓ'), { maxLength: 3 }),
        fc.mixedCase(fc.constant('news')),
        fc.constantFrom('.', '。', '．', '｡'),
        fc.mixedCase(fc.constant('example')),
        fc.constantFrom('', '.', '。', ':443', '.:443', ':'),
        fc.constantFrom('/', '/x', '', '?q=1', '#f', '/%e6%97%a5'),
      )
      .map(([scheme, subs, news, dot, example, tail, rest]) => {
        const port =
          tail.includes(':') && scheme.toLowerCase() === 'http://' ? tail.replace(':443', ':80') : tail;
        return `${scheme}${subs.map((s) => `${s}${dot}`).join('')}${news}${dot}${example}${port}${rest}`;
      });
    const tally = checkGenerated(t, spelled);
    assert.equal(tally.off_policy + tally.refused, 0, 'every spelling of the allowed host is accepted');
  });

  test('any string at all: nothing throws, refusals carry a text', (t) => {
    checkGenerated(t, fc.oneof(anyStringArbitrary(), hostileStringArbitrary()), (value) => {
      assert.equal(typeof hostMatches(value, 'news.example'), 'boolean');
      assert.equal(typeof isOwnShortHost(value, 'https://sho.rt'), 'boolean');
      assert.equal(typeof isOwnShortHost('sho.rt', value), 'boolean');
      const host = canonicalizeHost(value);
      assert.ok(host === null || PRINTABLE_ASCII.test(host));
    });
  });

  test('already canonical URLs generated in every shape come out byte-identical', (t) => {
    const tally = checkGenerated(t, canonicalTargetUrlArbitrary(), (url) => {
      assert.equal(new URL(url).href, url, 'the generator makes canonical URLs');
      assert.equal((canonicalizeTarget(url) as { url: string }).url, url);
    });
    assert.equal(tally.accepted, RUNS);
  });

  test('at least as strict as the rules it replaces (targetUrlProblem, targetPolicyProblem)', (t) => {
    const oldPolicy = createTargetPolicy({ ...HOSTILE_POLICY, allowedTargetHosts: ['news.example'] });
    let stricter = 0;
    const inputs = [
      ...HOSTILE_TARGETS.map((c) => c.input),
      ...sampleOf(fc.oneof(targetUrlArbitrary(), mutatedTargetUrlArbitrary(), webUrlArbitrary()), 3000, 1),
    ];
    for (const input of inputs) {
      const old = targetUrlProblem(input) ?? targetPolicyProblem(input, oldPolicy);
      const now = checkTarget(input, policy);
      if (old !== null) assert.ok(!now.ok, `${JSON.stringify(input)}: the old rules refused it (${old})`);
      else if (!now.ok) stricter++;
    }
    t.diagnostic(`${inputs.length} inputs; ${stricter} the old rules accepted are refused or off policy now`);
  });

  test('totals', (t) => {
    const total = totals.accepted + totals.off_policy + totals.refused;
    assert.ok(total >= 7 * 300, `${total}`);
    t.diagnostic(
      `seed ${SEED}: ${total} generated, ${totals.accepted} accepted, ${totals.off_policy} canonical but off policy, ${totals.refused} refused`,
    );
  });
});

describe('other parsers, in one batch each', () => {
  // Corpus inputs plus seeded generated ones; the same list goes to Python and to Deno.
  const inputs = [
    ...HOSTILE_TARGETS.map((c) => c.input),
    ...sampleOf(targetUrlArbitrary(), 1500, 2),
    ...sampleOf(mutatedTargetUrlArbitrary(), 1000, 3),
    ...sampleOf(webUrlArbitrary(), 500, 4),
    ...sampleOf(canonicalTargetUrlArbitrary(), 300, 5),
  ];
  const results = inputs.map((input) => canonicalizeTarget(input));
  const accepted = results.filter((r): r is CanonicalTarget & { ok: true } => r.ok);

  test("Python's urllib.parse.urlsplit (not WHATWG) reads every accepted target alike", (t) => {
    const python = spawnSync('python3', ['--version']);
    if (python.status !== 0) {
      t.skip('python3 is not installed');
      return;
    }
    const script = [
      'import json, sys',
      'from urllib.parse import urlsplit',
      'def read(u):',
      '    try:',
      '        s = urlsplit(u)',
      '        return {"scheme": s.scheme, "hostname": s.hostname, "port": s.port, "user": s.username, "password": s.password}',
      '    except ValueError as e:',
      '        return {"error": str(e)}',
      'json.dump([read(u) for u in json.load(sys.stdin)], sys.stdout)',
    ].join('\n');
    const raw = inputs.filter((input) => !/\p{Cs}/u.test(input)); // JSON to Python needs valid UTF-16
    const batch = [...accepted.map((r) => r.url), ...raw];
    const read = JSON.parse(
      execFileSync('python3', ['-c', script], {
        input: JSON.stringify(batch),
        maxBuffer: 64 << 20,
      }).toString(),
    ) as {
      scheme?: string;
      hostname?: string | null;
      port?: number | null;
      user?: string | null;
      error?: string;
    }[];
    assert.equal(read.length, batch.length);

    accepted.forEach((r, i) => {
      const p = read[i]!;
      const whatwg = new URL(r.url);
      assert.equal(p.error, undefined, `${r.url}: ${p.error}`);
      assert.equal(`${p.scheme}:`, whatwg.protocol, r.url);
      assert.equal(p.hostname, bare(r.hostname), r.url);
      assert.equal(p.port === null ? '' : String(p.port), whatwg.port, r.url);
      assert.equal(p.user, null, r.url);
    });

    // The raw inputs show why: wherever Python and WHATWG read a different host, Lifeline refused the input
    // or stored something else than what was sent.
    let disagreements = 0;
    raw.forEach((input, i) => {
      const p = read[accepted.length + i]!;
      let whatwgHost: string | null = null;
      try {
        whatwgHost = bare(new URL(input).hostname);
      } catch {
        return;
      }
      if (p.error !== undefined || p.hostname === whatwgHost) return;
      disagreements++;
      const result = canonicalizeTarget(input);
      assert.ok(!result.ok || result.url !== input, `${JSON.stringify(input)} passed unchanged`);
    });
    const finding = read[accepted.length + raw.indexOf('https://news.example\\@evil.example/')]!;
    assert.equal(finding.hostname, 'evil.example');
    assert.ok(accepted.length >= 300, `only ${accepted.length} accepted`);
    t.diagnostic(
      `${inputs.length} inputs, ${accepted.length} accepted and read alike by Python; ${disagreements} raw inputs Python and WHATWG read differently, none passed unchanged`,
    );
  });

  test('Deno (WHATWG in Rust) gives the same verdict and the same bytes for every input', (t) => {
    const deno = join(ROOT, 'node_modules', 'deno', 'deno');
    assert.ok(existsSync(deno), `the Deno binary is missing at ${deno} (npm install)`);
    const moduleUrl = pathToFileURL(join(ROOT, 'lib', 'targets', 'canonical_url.ts')).href;
    const code = [
      `import { canonicalizeTarget } from ${JSON.stringify(moduleUrl)};`,
      'const inputs: string[] = JSON.parse(await new Response(Deno.stdin.readable).text());',
      'console.log(JSON.stringify(inputs.map((input) => canonicalizeTarget(input))));',
    ].join('\n');
    const out = execFileSync(deno, ['eval', '--ext=ts', code], {
      input: JSON.stringify(inputs),
      maxBuffer: 64 << 20,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DENO_NO_UPDATE_CHECK: '1',
        DENO_DIR: process.env.DENO_DIR ?? join(ROOT, '.cache', 'deno'),
      },
    }).toString();
    const denoResults = JSON.parse(out) as CanonicalTarget[];
    assert.equal(denoResults.length, inputs.length);
    const differences = inputs
      .map((input, i) => ({ input, node: results[i], deno: denoResults[i] }))
      .filter((d) => JSON.stringify(d.node) !== JSON.stringify(d.deno));
    assert.deepEqual(differences, [], 'Node and Deno disagree');
    t.diagnostic(`${inputs.length} inputs: identical results under Node and Deno`);
  });
});

describe('host comparison', () => {
  test('hostMatches compares canonical host names: equal or a subdomain', () => {
    const yes: [string, string | string[]][] = [
      ['news.example', 'news.example'],
      ['www.news.example', 'news.example'],
      ['NEWS.EXAMPLE.', 'news.example'],
      ['news.example', 'NEWS.Example.'],
      ['news。example', 'news.example'],
      ['xn--mnchen-3ya.de', 'münchen.de'],
      ['sub.münchen.de', ['x.example', 'xn--mnchen-3ya.de']],
      ['[::1]', '[0:0::1]'],
    ];
    const no: [string, string | string[]][] = [
      ['evilnews.example', 'news.example'],
      ['news.example.evil.example', 'news.example'],
      ['news.example', 'www.news.example'],
      ['news.example', []],
      ['news.example:443', 'news.example'],
      ['user@news.example', 'news.example'],
      ['news..example', 'news.example'],
      ['news.example', 'news..example'],
      ['', ''],
      ['news.exаmple', 'news.example'],
    ];
    for (const [host, allowed] of yes) assert.ok(hostMatches(host, allowed), `${host} ${allowed}`);
    for (const [host, allowed] of no) assert.ok(!hostMatches(host, allowed), `${host} ${allowed}`);
  });

  test('isOwnShortHost: the same name on a default port or on the short domain port', () => {
    const hostOf = (url: string) => (canonicalizeTarget(url) as { host: string }).host;
    const yes: [string, string][] = [
      [hostOf('https://sho.rt.:443/x'), 'https://sho.rt'],
      [hostOf('http://SHO.RT/x'), 'https://sho.rt'],
      ['sho.rt', 'https://SHO.RT.'],
      ['sho.rt', 'https://sho.rt.:443/'],
      ['sho.rt:8443', 'https://sho.rt:8443'],
      ['sho.rt', 'https://sho.rt:8443'],
      ['127.0.0.1:3000', 'http://127.0.0.1:3000'],
      [hostOf('http://sho.rt:443/x'), 'https://sho.rt'],
    ];
    const no: [string, string][] = [
      ['sho.rt:8443', 'https://sho.rt'],
      ['www.sho.rt', 'https://sho.rt'],
      ['news.example', 'https://sho.rt'],
      ['127.0.0.1:4000', 'http://127.0.0.1:3000'],
      ['sho.rt', 'not a url'],
      ['sho.rt', 'ftp://sho.rt'],
    ];
    for (const [host, base] of yes) assert.ok(isOwnShortHost(host, base), `${host} ${base}`);
    for (const [host, base] of no) assert.ok(!isOwnShortHost(host, base), `${host} ${base}`);
  });

  test('createCanonicalTargetPolicy canonicalises configuration and refuses what is not a host', () => {
    assert.deepEqual(
      createCanonicalTargetPolicy({
        allowedTargetHosts: ['News.Example.', 'münchen.de', 'news.example'],
        shortBaseUrl: 'https://SHO.RT.:443',
      }),
      {
        allowedHosts: ['news.example', 'xn--mnchen-3ya.de'],
        shortHost: 'sho.rt',
        shortPort: '443',
        // The other short domains (SHORT_DOMAINS after the first) are ours too; none configured here.
        otherShortHosts: [],
      },
    );
    assert.equal(
      createCanonicalTargetPolicy({ allowedTargetHosts: [], shortBaseUrl: 'http://127.0.0.1:3000' })
        .shortPort,
      '3000',
    );
    for (const bad of [
      'news example',
      'a@b.example',
      'http://news.example',
      'news.example:443',
      'a..b',
      '',
    ]) {
      assert.throws(
        () => createCanonicalTargetPolicy({ allowedTargetHosts: [bad], shortBaseUrl: 'https://sho.rt' }),
        /ALLOWED_TARGET_HOSTS/,
        bad,
      );
    }
    assert.throws(
      () => createCanonicalTargetPolicy({ allowedTargetHosts: [], shortBaseUrl: 'sho.rt' }),
      /SHORT_BASE_URL/,
    );
  });

  test('targetRuleProblem takes only canonical strings; an empty allow-list allows any host but ours', () => {
    const open = createCanonicalTargetPolicy({ allowedTargetHosts: [], shortBaseUrl: 'https://sho.rt' });
    assert.equal(targetRuleProblem('https://evil.example/x', open), null);
    assert.equal(targetRuleProblem('https://sho.rt/x', open), TARGET_PROBLEMS.ownHost);
    assert.equal(targetRuleProblem('https://sho.rt:443/x', open), TARGET_PROBLEMS.notCanonical);
    assert.equal(targetRuleProblem('https://NEWS.example/', policy), TARGET_PROBLEMS.notCanonical);
    assert.equal(targetRuleProblem('https://news.example./x', policy), TARGET_PROBLEMS.notCanonical);
    assert.equal(targetRuleProblem('https://news.example', policy), TARGET_PROBLEMS.notCanonical);
    assert.equal(
      targetRuleProblem('https://evil.example/', policy),
      'host evil.example is not in ALLOWED_TARGET_HOSTS',
    );
    assert.equal(targetRuleProblem('https://a.news.example:8443/', policy), null);
    assert.equal(
      targetRuleProblem('https://news.example.evil.example/', policy),
      'host news.example.evil.example is not in ALLOWED_TARGET_HOSTS',
    );
    assert.equal(
      targetRuleProblem('https://xnews.example/', policy),
      'host xnews.example is not in ALLOWED_TARGET_HOSTS',
    );
  });
});

describe('cost', () => {
  test('targetRuleProblem on a canonical URL is a scan, far cheaper than canonicalising', (t) => {
    const typical =
      'https://news.example/2024/05/01/%d8%a7%d9%84-story-of-the-day/?utm_source=newsletter&id=7';
    const other = 'HTTPS://News.Example:443/2024/05/01/القصة/?id=7';
    assert.equal(targetRuleProblem(typical, policy), null);
    // CPU time, not wall time: the machine is shared, and a preempted loop would count others' work.
    const time = (calls: number, fn: () => unknown) => {
      for (let i = 0; i < Math.min(calls, 10_000); i++) fn(); // warm up
      const start = process.cpuUsage();
      for (let i = 0; i < calls; i++) fn();
      const used = process.cpuUsage(start);
      return ((used.user + used.system) * 1000) / calls;
    };
    const oldPolicy = createTargetPolicy({ ...HOSTILE_POLICY, allowedTargetHosts: ['news.example'] });
    const rule = time(1_000_000, () => targetRuleProblem(typical, policy));
    const canonicalFast = time(1_000_000, () => canonicalizeTarget(typical));
    const slow = time(20_000, () => canonicalizeTarget(other));
    const old = time(200_000, () => targetUrlProblem(typical) ?? targetPolicyProblem(typical, oldPolicy));
    t.diagnostic(
      `CPU ns/call: targetRuleProblem(canonical) ${rule.toFixed(0)}, canonicalizeTarget(canonical) ${canonicalFast.toFixed(0)}, ` +
        `canonicalizeTarget(non-canonical) ${slow.toFixed(0)}, old targetUrlProblem+targetPolicyProblem ${old.toFixed(0)}`,
    );
    assert.ok(
      rule * 3 < slow,
      `the canonical check (${rule} ns) should be far cheaper than canonicalising (${slow} ns)`,
    );
  });

  test('targetRuleProblem allocates nothing for an allowed canonical URL', (t) => {
    const typical = JSON.parse(
      JSON.stringify('https://news.example/2024/05/01/%d8%a7%d9%84-story/?utm_source=newsletter&id=7'),
    ) as string;
    const calls = 1_000_000;
    // Results go to a ring buffer, so the optimiser cannot drop an allocation as unused. Bytes allocated are
    // the growth of the heap plus what the collections during the loop freed.
    const sink: unknown[] = new Array(1024);
    const bytesPerCall = (fn: () => unknown) => {
      for (let i = 0; i < 10_000; i++) sink[i & 1023] = fn();
      const profiler = new GCProfiler();
      profiler.start();
      const before = getHeapStatistics().used_heap_size;
      for (let i = 0; i < calls; i++) sink[i & 1023] = fn();
      const after = getHeapStatistics().used_heap_size;
      const freed = (profiler.stop()?.statistics ?? []).reduce(
        (sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize,
        0,
      );
      return (after - before + freed) / calls;
    };
    // The control shows the measure sees allocation: canonicalizeTarget returns a fresh object every call.
    const control = bytesPerCall(() => canonicalizeTarget(typical));
    const rule = bytesPerCall(() => targetRuleProblem(typical, policy));
    t.diagnostic(
      `bytes/call: targetRuleProblem ${rule.toFixed(2)}, canonicalizeTarget ${control.toFixed(1)}`,
    );
    assert.ok(control > 16, `the control allocates (${control} bytes/call)`);
    assert.ok(rule < 1, `targetRuleProblem allocated ${rule} bytes/call`);
  });
});
