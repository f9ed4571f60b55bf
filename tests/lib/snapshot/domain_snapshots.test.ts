import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { createStandaloneAnswerer } from '../../../devkit/harness/link_states.ts';
import { type Config, parseConfig } from '../../../lib/shared/config.ts';
import { DOMAINS_FOLDER, writeSnapshotFiles } from '../../../lib/snapshot/write_snapshot.ts';
import { createCanonicalTargetPolicy } from '../../../lib/targets/target_rule.ts';
import { getFreePort } from '../../../scripts/dev_server.ts';
import { startNginx } from '../../helpers/nginx.ts';

// The static snapshot with several short domains (ADR 0078): the default domain's files where they always were,
// each other domain's under domains/<name>/, each served by nginx exactly as Lifeline answers that Host — the
// same code answering differently on each.
const HOME = 'sho.rt.test';
const TWO = 'two.snap.test';
let db: TestDatabase;
let config: Config;
let work: string;

before(async () => {
  db = await createTestDatabase();
  config = parseConfig({
    DATABASE_URL: db.url,
    SHORT_BASE_URL: `https://${HOME}`,
    SHORT_DOMAINS: `${HOME},${TWO}`,
    SHORT_DOMAIN_UNKNOWN_HOST: 'not_found',
  });
  await db.sql`
    INSERT INTO links (code, domain, target_url, status, safety, origin, owner) VALUES
      ('snapA', '', 'https://news.example/home-a', 'active', 'clean', 'api', 't'),
      ('snapOnlyHome', '', 'https://news.example/home-only', 'active', 'clean', 'api', 't'),
      (${`${TWO}/snapA`}, ${TWO}, 'https://news.example/two-a', 'active', 'clean', 'api', 't'),
      (${`${TWO}/snapGone`}, ${TWO}, 'https://news.example/two-gone', 'gone', 'clean', 'api', 't')`;
  work = mkdtempSync(join(tmpdir(), 'lifeline-domain-snapshot-'));
  chmodSync(work, 0o755);
});
after(async () => {
  await db.drop();
  rmSync(work, { recursive: true, force: true });
});

const codes = ['snapA', 'snapOnlyHome', 'snapGone', 'nothing1'];

/** `status Location` of each code as Lifeline answers it for this Host. */
async function lifeline(host: string): Promise<string[]> {
  const answerer = createStandaloneAnswerer(config, db.sql);
  const out: string[] = [];
  for (const code of codes) {
    const a = await answerer.answer({
      method: 'GET',
      code,
      query: '',
      header: (name) => (name === 'host' ? host : undefined),
    });
    out.push(`${code} ${a.status} ${a.headers.Location ?? '-'}`);
  }
  return out;
}

describe('static snapshot per short domain', () => {
  test('each domain’s nginx answers its own links, as Lifeline does for its Host', async () => {
    const out = join(work, 'snap');
    const ports = { [HOME]: await getFreePort(), [TWO]: await getFreePort() };
    const summary = await writeSnapshotFiles(
      { sql: db.sql },
      {
        outDir: out,
        formats: ['nginx', 'redirects'],
        shortBaseUrl: config.shortBaseUrl,
        shortDomains: config.shortDomains,
        redirect: config.redirect,
        targetPolicy: createCanonicalTargetPolicy(config),
        listen: `127.0.0.1:${ports[HOME]}`,
      },
    );
    assert.equal(summary.answers, 4);
    assert.ok(summary.files.includes('nginx/nginx.conf'));
    assert.ok(summary.files.includes(join(DOMAINS_FOLDER, TWO, 'nginx', 'nginx.conf')));
    // The second domain's _redirects names its own codes only.
    const redirects = readFileSync(join(out, DOMAINS_FOLDER, TWO, 'redirects', '_redirects'), 'utf8');
    assert.match(redirects, /^\/snapA\s+https:\/\/news\.example\/two-a\s+301$/m);
    assert.doesNotMatch(redirects, /snapOnlyHome|home-a/);
    // Each domain's nginx listens where its own configuration says: the second one's is rewritten to its port.
    const twoConf = join(out, DOMAINS_FOLDER, TWO, 'nginx', 'nginx.conf');
    const conf = readFileSync(twoConf, 'utf8');
    assert.match(conf, new RegExp(`server_name ${TWO.replace(/\./g, '\\.')};`));
    const rewritten = join(work, 'two-nginx.conf');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(rewritten, conf.replaceAll(`127.0.0.1:${ports[HOME]}`, `127.0.0.1:${ports[TWO]}`));
    for (const [host, configPath] of [
      [HOME, join(out, 'nginx', 'nginx.conf')],
      [TWO, rewritten],
    ] as const) {
      const nginx = await startNginx({ prefix: join(work, `nginx-${host}`), configPath, port: ports[host] });
      try {
        const served: string[] = [];
        for (const code of codes) {
          const res = await fetch(`http://127.0.0.1:${ports[host]}/${code}`, { redirect: 'manual' });
          await res.arrayBuffer();
          served.push(`${code} ${res.status} ${res.headers.get('location') ?? '-'}`);
        }
        assert.deepEqual(served, await lifeline(host), `${host}: nginx and Lifeline agree`);
      } finally {
        await nginx.stop();
      }
    }
    assert.deepEqual((await lifeline(HOME)).slice(0, 3), [
      'snapA 301 https://news.example/home-a',
      'snapOnlyHome 301 https://news.example/home-only',
      'snapGone 404 -',
    ]);
    assert.deepEqual((await lifeline(TWO)).slice(0, 3), [
      'snapA 301 https://news.example/two-a',
      'snapOnlyHome 404 -',
      'snapGone 410 -',
    ]);
  });
});

/** `status Location` of a GET to nginx on `port` with this Host header (fetch may not set Host). */
function askNginx(port: number, host: string, code: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: `/${code}`, headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(`${code} ${res.statusCode} ${res.headers.location ?? '-'}`));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('every short domain in one nginx http block', () => {
  test('nginx_all.conf answers each Host as Lifeline does, the maps of both domains side by side', async () => {
    const out = join(work, 'snap-all');
    const port = await getFreePort();
    const summary = await writeSnapshotFiles(
      { sql: db.sql },
      {
        outDir: out,
        formats: ['nginx'],
        shortBaseUrl: config.shortBaseUrl,
        shortDomains: config.shortDomains,
        unknownHost: config.unknownHost,
        redirect: config.redirect,
        targetPolicy: createCanonicalTargetPolicy(config),
        listen: `127.0.0.1:${port}`,
      },
    );
    assert.ok(summary.files.includes('nginx/nginx_all.conf'));
    assert.ok(summary.files.includes('nginx/lifeline_all_http.conf'));
    // The default domain keeps the variable names it always had; the other's are its own.
    const homeMaps = readFileSync(join(out, 'nginx', 'lifeline_maps.conf'), 'utf8');
    const twoMaps = readFileSync(join(out, DOMAINS_FOLDER, TWO, 'nginx', 'lifeline_maps.conf'), 'utf8');
    assert.match(homeMaps, /\$lifeline_answer \{/);
    assert.match(twoMaps, /\$lifeline_two_2esnap_2etest_answer \{/);
    assert.doesNotMatch(twoMaps, /\$lifeline_answer\b/);
    const nginx = await startNginx({
      prefix: join(work, 'nginx-all'),
      configPath: join(out, 'nginx', 'nginx_all.conf'),
      port,
    });
    try {
      for (const host of [HOME, TWO]) {
        const served: string[] = [];
        for (const code of codes) served.push(await askNginx(port, host, code));
        assert.deepEqual(served, await lifeline(host), `${host}: nginx and Lifeline agree`);
      }
      // SHORT_DOMAIN_UNKNOWN_HOST=not_found: a Host the deployment does not name gets a 404, as from Lifeline.
      assert.equal(await askNginx(port, 'other.test', 'snapA'), 'snapA 404 -');
      assert.deepEqual(
        await lifeline('other.test'),
        codes.map((c) => `${c} 404 -`),
      );
    } finally {
      await nginx.stop();
    }
  });
});
