// compose.yaml, checked without a container engine (no registry is reachable to pull its images): against the
// Compose Specification's JSON schema (committed in deploy/compose/), by Debian's docker-compose (`config`
// interpolates .env, checks the file against its own schema and resolves every service), and against our own
// rules: the stack's shape, every variable it reads listed in .env.example, every Lifeline setting it sets one the
// configuration schema reads, and the Temporal set-up equal to what the dev server of `npm start` is given.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { parseConfig } from '../../lib/shared/config.ts';
import { COMPOSE_VARIABLES, settingNames } from '../../scripts/env_example_render.ts';
import { getDevServerArgs, ROOT } from '../../scripts/temporal_cli.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/contract.ts';

const COMPOSE_FILE = join(ROOT, 'compose.yaml');
const COMPOSE_DIR = join(ROOT, 'deploy', 'compose');
const DOCKER_COMPOSE = ['/usr/bin/docker-compose', '/usr/local/bin/docker-compose'].find((p) =>
  existsSync(p),
);
const scratch = mkdtempSync(join(tmpdir(), 'lifeline-compose-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

type Service = {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  deploy?: { replicas?: number };
  healthcheck?: { test: string[] };
  read_only?: boolean;
  stop_grace_period?: string;
};
type Compose = { services: Record<string, Service> };

const composeText = readFileSync(COMPOSE_FILE, 'utf8');
const compose = parse(composeText, { merge: true }) as Compose;

/** What each blank active line of .env.example gets in these tests: values the configuration schema accepts. */
const FILLED: Record<string, string> = {
  POSTGRES_PASSWORD: 'compose-test-postgres',
  TEMPORAL_POSTGRES_PASSWORD: 'compose-test-temporal',
  SHORT_BASE_URL: 'https://sho.rt',
  ADMIN_EMAIL: 'admin@example.com',
  ADMIN_PASSWORD: 'compose-test-password',
  BOOTSTRAP_API_KEY: 'compose-test-bootstrap-api-key',
  WORDPRESS_WEBHOOK_SECRET: 'compose-test-webhook-secret',
  METRICS_TOKEN: 'compose-test-metrics-token',
};

/** .env.example with the given blank lines filled, as an operator's .env. */
function envFile(fill: Record<string, string>): string {
  return readFileSync(join(ROOT, '.env.example'), 'utf8').replace(
    /^([A-Z][A-Z0-9_]*)=$/gm,
    (line, name: string) => (fill[name] === undefined ? line : `${name}=${fill[name]}`),
  );
}

test('compose.yaml is valid against the Compose Specification schema, which refuses a wrong condition', () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  // The schema names draft-07 by its https address; Ajv knows the same meta-schema by its http one.
  ajv.addMetaSchema({
    ...(ajv.getSchema('http://json-schema.org/draft-07/schema')!.schema as object),
    $id: 'https://json-schema.org/draft-07/schema',
  });
  const validate = ajv.compile(
    JSON.parse(readFileSync(join(COMPOSE_DIR, 'compose-spec.schema.json'), 'utf8')),
  );
  assert.ok(validate(compose), JSON.stringify(validate.errors, null, 2));
  const broken = structuredClone(compose);
  broken.services.web!.depends_on!.migrate!.condition = 'service_finished';
  assert.equal(validate(broken), false, 'the schema check can fail');
});

test('the stack: two web replicas and a worker wait for the migrate job, Redis and the Temporal set-up', () => {
  const s = compose.services;
  assert.deepEqual(
    Object.keys(s).sort(),
    [
      'migrate',
      'postgres',
      'proxy',
      'redis',
      'temporal',
      'temporal-postgres',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
      'web',
      'worker',
    ].sort(),
  );
  assert.equal(s.web!.deploy?.replicas, 2);
  for (const [name, entry] of [
    ['web', 'web'],
    ['worker', 'worker'],
    ['migrate', 'migrate'],
  ] as const) {
    assert.deepEqual(s[name]!.command, [entry], `${name} runs the image's ${entry} entry`);
    assert.equal(s[name]!.image, s.web!.image, 'one image for every Lifeline process');
    assert.equal(s[name]!.read_only, true);
  }
  for (const name of ['web', 'worker']) {
    assert.equal(s[name]!.depends_on?.migrate?.condition, 'service_completed_successfully');
    assert.equal(s[name]!.depends_on?.['temporal-setup']?.condition, 'service_completed_successfully');
  }
  assert.equal(s.migrate!.depends_on?.postgres?.condition, 'service_healthy');
  assert.equal(s.temporal!.depends_on?.['temporal-schema']?.condition, 'service_completed_successfully');
  assert.match(s.web!.healthcheck!.test.join(' '), /127\.0\.0\.1:8000\/readyz/);
  assert.match(s.worker!.healthcheck!.test.join(' '), /127\.0\.0\.1:9464\/readyz/);
  // docs/DEPLOYING.md, "Shutdown and rolling deploys": the grace periods the processes need.
  assert.equal(s.web!.stop_grace_period, '30s');
  assert.equal(s.worker!.stop_grace_period, '75s');
  // The Temporal server's own database is not Lifeline's.
  assert.notEqual(s.temporal!.environment?.POSTGRES_SEEDS, 'postgres');
});

test('every variable compose.yaml reads is in .env.example, and every Lifeline setting it sets is one we read', () => {
  const read = new Set([...composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
  const listed = new Set([...COMPOSE_VARIABLES.map((v) => v.name), ...settingNames()]);
  const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
  for (const name of read) {
    assert.ok(
      listed.has(name),
      `${name} is read by compose.yaml but not listed by scripts/env_example_render.ts`,
    );
    assert.match(example, new RegExp(`^(# )?${name}=`, 'm'), `${name} is in .env.example`);
  }
  const settings = new Set(settingNames());
  for (const name of ['web', 'worker', 'migrate']) {
    for (const key of Object.keys(compose.services[name]!.environment ?? {})) {
      if (key === 'NODE_OPTIONS') continue;
      assert.ok(settings.has(key), `${name} sets ${key}, which no configuration schema part reads`);
    }
  }
});

test("the Temporal set-up matches the dev server's: search attributes and dynamic configuration", () => {
  const setup = readFileSync(join(COMPOSE_DIR, 'temporal-setup.sh'), 'utf8');
  const listed = /^SEARCH_ATTRIBUTES="([^"]*)"$/m.exec(setup)?.[1]?.split(' ');
  assert.deepEqual(
    listed,
    SEARCH_ATTRIBUTE_KEYS.map((k) => k.name),
  );
  const devServer = getDevServerArgs({ port: 7233 });
  const devValues = Object.fromEntries(
    devServer
      .flatMap((arg, i) => (arg === '--dynamic-config-value' ? [devServer[i + 1]!] : []))
      .map((kv) => kv.split('='))
      .map(([k, v]) => [k!, JSON.parse(v!) as unknown]),
  );
  const dynamic = parse(readFileSync(join(COMPOSE_DIR, 'temporal-dynamicconfig.yaml'), 'utf8')) as Record<
    string,
    { value: unknown }[]
  >;
  assert.deepEqual(Object.fromEntries(Object.entries(dynamic).map(([k, v]) => [k, v[0]!.value])), devValues);
  assert.ok(Object.keys(devValues).length >= 3);
});

describe('docker-compose config (Debian package docker-compose)', {
  skip: DOCKER_COMPOSE
    ? false
    : 'docker-compose is not installed (Debian package docker-compose; .ci/run installs it)',
}, () => {
  /** A project folder as an operator has it: compose.yaml, deploy/compose/ and a .env. */
  function project(name: string, env: string): string {
    const dir = join(scratch, name);
    mkdirSync(join(dir, 'deploy', 'compose'), { recursive: true });
    copyFileSync(COMPOSE_FILE, join(dir, 'compose.yaml'));
    for (const file of [
      'nginx.conf',
      'temporal-schema.sh',
      'temporal-setup.sh',
      'temporal-dynamicconfig.yaml',
    ]) {
      copyFileSync(join(COMPOSE_DIR, file), join(dir, 'deploy', 'compose', file));
    }
    writeFileSync(join(dir, '.env'), env);
    return dir;
  }
  function config(dir: string): { status: number | null; stdout: string; stderr: string } {
    const run = spawnSync(DOCKER_COMPOSE!, ['--project-name', 'lifeline', 'config'], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  }

  test('with .env.example filled in, it resolves, and each Lifeline process gets a configuration we accept', () => {
    const run = config(project('filled', envFile(FILLED)));
    assert.equal(run.status, 0, run.stderr);
    const resolved = parse(run.stdout) as Compose;
    for (const name of ['web', 'worker', 'migrate']) {
      const env = resolved.services[name]!.environment!;
      assert.equal(
        env.DATABASE_URL,
        `postgres://lifeline:${FILLED.POSTGRES_PASSWORD}@postgres:5432/lifeline`,
      );
      assert.equal(env.TEMPORAL_ADDRESS, 'temporal:7233');
      const parsed = parseConfig(env);
      assert.equal(parsed.shortBaseUrl, 'https://sho.rt');
      assert.equal(parsed.redis?.kind, 'tcp');
      assert.equal(parsed.temporal.namespace, 'lifeline');
      assert.equal(parsed.metricsToken, FILLED.METRICS_TOKEN);
      assert.equal(parsed.trustedClientIpHeader, 'x-real-ip', 'the proxy sets X-Real-IP');
    }
    assert.equal(resolved.services.web!.deploy?.replicas, 2);
  });

  test('a blank required line stops it, naming the variable', () => {
    const { POSTGRES_PASSWORD: _, ...rest } = FILLED;
    const run = config(project('blank-password', envFile(rest)));
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, /set POSTGRES_PASSWORD in \.env/);
    const noSecret = config(project('blank-secret', envFile({ ...FILLED, WORDPRESS_WEBHOOK_SECRET: '' })));
    assert.notEqual(noSecret.status, 0);
    assert.match(noSecret.stderr, /set WORDPRESS_WEBHOOK_SECRET in \.env/);
  });
});
