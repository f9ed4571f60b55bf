// A real Prometheus scraping a real Lifeline web process (`main.ts`, on a test database) and evaluating
// ops/prometheus/lifeline.rules.yml, as tests/ops/prometheus_alert_firing.test.ts does: what the domain watch
// stored in Postgres (a registration with five days left, an expired certificate, a Safe Browsing listing) is
// exported by the web process, and ShortDomainExpiringSoon goes from pending to firing in Prometheus's own
// /api/v1/alerts, with TlsCertificateExpiresTomorrow and ShortDomainFlagged beside it and the 30-day band quiet.
// Every `for:` is shortened to 5 s, with 1 s scrape and evaluation intervals.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, startEntry } from '../../devkit/harness/entry_process.ts';
import { upsertDomainFactRead } from '../../lib/stores/domain_watch_store.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';

const PROMETHEUS = '/usr/bin/prometheus';
const skip = existsSync(PROMETHEUS)
  ? false
  : 'prometheus is not installed (Debian package prometheus; .ci/run installs it)';
const METRICS_TOKEN = 'domain-watch-test-metrics-token';
const DAY = 86_400_000;

interface PromAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
}

let db: TestDatabase;
let web: EntryProcess;
let prometheus: ChildProcess;
let webBase: string;
let promBase: string;
const dir = mkdtempSync(join(tmpdir(), 'lifeline-domain-watch-prom-'));

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function alertsNamed(name: string): Promise<PromAlert[]> {
  const response = await fetch(`${promBase}/api/v1/alerts`);
  const body = (await response.json()) as { data: { alerts: PromAlert[] } };
  return body.data.alerts.filter((a) => a.labels.alertname === name);
}

describe('a real Prometheus firing the domain watch’s alerts', { skip }, () => {
  before(async () => {
    db = await createTestDatabase();
    const now = Date.now();
    await upsertDomainFactRead(db.sql, {
      subject: 'shrt.test',
      fact: 'registration',
      ok: false,
      expiresAt: new Date(now + 5 * DAY),
      detail: { statuses: ['active'] },
    });
    await upsertDomainFactRead(db.sql, {
      subject: 'shrt.test',
      fact: 'certificate',
      ok: false,
      expiresAt: new Date(now - DAY),
      detail: { trusted: false, trustError: 'CERT_HAS_EXPIRED' },
    });
    await upsertDomainFactRead(db.sql, {
      subject: 'shrt.test',
      fact: 'reputation',
      ok: false,
      expiresAt: null,
      detail: { threats: ['MALWARE'] },
    });
    await upsertDomainFactRead(db.sql, {
      subject: 'newsroom.example',
      fact: 'registration',
      ok: true,
      expiresAt: new Date(now + 300 * DAY),
      detail: {},
    });
    const webPort = await getFreePort();
    webBase = `http://127.0.0.1:${webPort}`;
    web = startEntry('main.ts', {
      env: {
        HOME: process.env.HOME ?? dir,
        PORT: String(webPort),
        HOST: '127.0.0.1',
        DATABASE_URL: db.url,
        TEMPORAL_ADDRESS: process.env.LIFELINE_TEST_TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
        LOG_LEVEL: 'warn',
        SHUTDOWN_DELAY_MS: '0',
        METRICS_TOKEN,
      },
    });
    await waitFor(`the web process on ${webBase} (stderr: ${web.stderr()})`, 60_000, async () =>
      (await fetch(`${webBase}/readyz`)).ok ? true : undefined,
    );

    const rules = readFileSync(join(ROOT, 'ops', 'prometheus', 'lifeline.rules.yml'), 'utf8');
    const shortened = rules.replace(/^(\s+)for: \S+$/gm, '$1for: 5s');
    assert.notEqual(shortened, rules);
    writeFileSync(join(dir, 'lifeline.rules.yml'), shortened);
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        '  - lifeline.rules.yml',
        'scrape_configs:',
        '  - job_name: lifeline-web',
        '    authorization:',
        '      type: Bearer',
        `      credentials: ${METRICS_TOKEN}`,
        '    static_configs:',
        `      - targets: ['127.0.0.1:${webPort}']`,
        '',
      ].join('\n'),
    );
    mkdirSync(join(dir, 'data'));
    const promPort = await getFreePort();
    promBase = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let promErrors = '';
    prometheus.stderr?.on('data', (chunk) => {
      promErrors += chunk;
    });
    await waitFor(`Prometheus on ${promBase} (stderr: ${promErrors})`, 30_000, async () =>
      (await fetch(`${promBase}/-/ready`)).ok ? true : undefined,
    );
  });

  after(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await web?.stop({ killAfterMs: 10_000 });
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('five days of registration left: ShortDomainExpiringSoon from pending to firing', async (t) => {
    const seen: { state: string; atMs: number }[] = [];
    const started = Date.now();
    const firing = await waitFor('ShortDomainExpiringSoon to fire', 60_000, async () => {
      const [found] = await alertsNamed('ShortDomainExpiringSoon');
      if (found && seen.at(-1)?.state !== found.state)
        seen.push({ state: found.state, atMs: Date.now() - started });
      return found?.state === 'firing' ? found : undefined;
    });
    t.diagnostic(seen.map((s) => `${s.state} after ${s.atMs} ms`).join(', '));
    assert.deepEqual(
      seen.map((s) => s.state),
      ['pending', 'firing'],
    );
    assert.ok(seen[1]!.atMs - seen[0]!.atMs >= 4_000, `pending for the 5 s of for: ${JSON.stringify(seen)}`);
    assert.deepEqual(
      { domain: firing.labels.domain, severity: firing.labels.severity, service: firing.labels.service },
      { domain: 'shrt.test', severity: 'critical', service: 'lifeline' },
    );
    assert.match(firing.annotations.summary ?? '', /^shrt\.test: 5\.0 days of registration left$/);
    assert.equal(firing.annotations.runbook_url, 'docs/OPERATIONS.md#shortdomainexpiringsoon');
    // The other bands stay quiet; the healthy domain raises nothing.
    assert.deepEqual(await alertsNamed('ShortDomainExpiring'), []);
    assert.deepEqual(await alertsNamed('ShortDomainExpiresTomorrow'), []);
  });

  test('an expired certificate and a Safe Browsing listing fire their alerts', async () => {
    const certificate = await waitFor('TlsCertificateExpiresTomorrow to fire', 30_000, async () => {
      const [found] = await alertsNamed('TlsCertificateExpiresTomorrow');
      return found?.state === 'firing' ? found : undefined;
    });
    assert.equal(certificate.labels.host, 'shrt.test');
    assert.match(certificate.annotations.summary ?? '', /^shrt\.test: its certificate ends in -1\.0 days/);
    const flagged = await waitFor('ShortDomainFlagged to fire', 30_000, async () => {
      const [found] = await alertsNamed('ShortDomainFlagged');
      return found?.state === 'firing' ? found : undefined;
    });
    assert.deepEqual([flagged.labels.domain, flagged.labels.severity], ['shrt.test', 'critical']);
  });
});
