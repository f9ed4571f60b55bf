// The Temporal connection settings without a server: what each variable and the SDK's profile file turn into,
// which wins when both are set, and the messages for every mistake (connection_tls.test.ts connects for real).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { z } from 'zod';
import {
  loadTemporalConnectionOptions,
  parseTemporalSettings,
  refineTemporalSettings,
  type TemporalConnectionOptions,
  TemporalSettingsError,
  temporalEnvShape,
} from '../../../lib/temporal/connection_options.ts';

const dir = mkdtempSync(join(tmpdir(), 'lifeline-temporal-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');
mkdirSync(home);
// Stand-ins for PEM files: the loader reads bytes, the TLS stack parses them (connection_tls.test.ts).
const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'client.pem'), key: join(dir, 'client.key') };
for (const [name, path] of Object.entries(files)) writeFileSync(path, `${name} bytes`);

function load(env: Record<string, string>): TemporalConnectionOptions {
  const full = { HOME: home, ...env };
  return loadTemporalConnectionOptions({ settings: parseTemporalSettings(full), env: full });
}

/** The problems a bad environment is reported with, as `VARIABLE: message` lines. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    load(env);
  } catch (error) {
    assert.ok(error instanceof TemporalSettingsError, String(error));
    return error.problems.map((p) => `${p.variable}: ${p.message}`);
  }
  assert.fail('expected a TemporalSettingsError');
}

function writeProfileFile(name: string, toml: string): string {
  const path = join(dir, name);
  writeFileSync(path, toml);
  return path;
}

describe('Temporal connection settings', () => {
  test('nothing set: the local default address, namespace default, no TLS, no API key', () => {
    const options = load({});
    assert.deepEqual(options.client, { address: '127.0.0.1:7233' });
    assert.deepEqual(options.worker, { address: '127.0.0.1:7233' });
    assert.equal(options.namespace, 'default');
    assert.equal(options.summary.tls, 'off');
    const custom = loadTemporalConnectionOptions({
      settings: parseTemporalSettings({}),
      env: { HOME: home },
      defaultAddress: 'temporal:7233',
    });
    assert.equal(custom.client.address, 'temporal:7233');
  });

  test('Temporal Cloud with an API key: TLS switches on by itself; the key is in the options, not the summary', () => {
    const options = load({
      TEMPORAL_ADDRESS: 'eu-west-1.aws.api.temporal.io:7233',
      TEMPORAL_NAMESPACE: 'newsroom.a1b2c',
      TEMPORAL_API_KEY: 'cloud-key-123',
    });
    for (const side of [options.client, options.worker]) {
      assert.equal(side.address, 'eu-west-1.aws.api.temporal.io:7233');
      assert.equal(side.tls, true);
      assert.equal(side.apiKey, 'cloud-key-123');
    }
    assert.equal(options.namespace, 'newsroom.a1b2c');
    assert.deepEqual(options.summary, {
      address: 'eu-west-1.aws.api.temporal.io:7233',
      namespace: 'newsroom.a1b2c',
      tls: 'on',
      serverName: undefined,
      apiKey: true,
      profile: undefined,
      grpcMetadata: [],
    });
    assert.equal(JSON.stringify(options.summary).includes('cloud-key-123'), false);
  });

  test('Temporal Cloud with mTLS: the certificate pair and the CA are read into both option sets', () => {
    const options = load({
      TEMPORAL_ADDRESS: 'newsroom.a1b2c.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'newsroom.a1b2c',
      TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: files.key,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca,
      TEMPORAL_TLS_SERVER_NAME: 'newsroom.a1b2c.tmprl.cloud',
    });
    for (const side of [options.client, options.worker]) {
      const tls = side.tls;
      assert.ok(tls && typeof tls === 'object');
      assert.equal(Buffer.from(tls.clientCertPair!.crt).toString(), 'cert bytes');
      assert.equal(Buffer.from(tls.clientCertPair!.key).toString(), 'key bytes');
      assert.equal(Buffer.from(tls.serverRootCACertificate!).toString(), 'ca bytes');
      assert.equal(tls.serverNameOverride, 'newsroom.a1b2c.tmprl.cloud');
    }
    assert.equal(options.summary.tls, 'mutual');
    assert.equal(options.summary.apiKey, false);
  });

  test('certificate and key as *_DATA (secrets mounted as variables) work like paths', () => {
    const options = load({
      TEMPORAL_TLS_CLIENT_CERT_DATA: 'cert text',
      TEMPORAL_TLS_CLIENT_KEY_DATA: 'key text',
    });
    const tls = options.worker.tls;
    assert.ok(tls && typeof tls === 'object');
    assert.equal(Buffer.from(tls.clientCertPair!.key).toString(), 'key text');
  });

  test('TEMPORAL_TLS=true alone is TLS with the system roots; false turns TLS off even with an API key', () => {
    assert.equal(load({ TEMPORAL_TLS: 'true' }).summary.tls, 'on');
    const plain = load({ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k-plain' });
    assert.equal(plain.client.tls, false);
    assert.equal(plain.summary.tls, 'off');
    assert.match(plain.warnings.join('\n'), /without TLS/);
    assert.equal(plain.warnings.join('\n').includes('k-plain'), false);
  });

  test('TEMPORAL_GRPC_META_* headers reach both sides (names in the summary, values not)', () => {
    const options = load({ TEMPORAL_GRPC_META_X_TENANT: 'newsroom' });
    assert.deepEqual(options.client.metadata, { 'x-tenant': 'newsroom' });
    assert.deepEqual(options.worker.metadata, { 'x-tenant': 'newsroom' });
    assert.deepEqual(options.summary.grpcMetadata, ['x-tenant']);
  });

  test('the profile file: TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE select it; the environment wins field by field', () => {
    const configFile = writeProfileFile(
      'temporal.toml',
      [
        '[profile.default]',
        'address = "default-profile:7233"',
        '',
        '[profile.prod]',
        'address = "prod.a1b2c.tmprl.cloud:7233"',
        'namespace = "prod.a1b2c"',
        '[profile.prod.tls]',
        `client_cert_path = "${files.cert}"`,
        `client_key_path = "${files.key}"`,
        '',
      ].join('\n'),
    );
    const fromFile = load({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' });
    assert.equal(fromFile.client.address, 'prod.a1b2c.tmprl.cloud:7233');
    assert.equal(fromFile.namespace, 'prod.a1b2c');
    assert.equal(fromFile.summary.tls, 'mutual');
    assert.equal(fromFile.summary.profile, 'prod');

    const overridden = load({
      TEMPORAL_CONFIG_FILE: configFile,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_NAMESPACE: 'staging.a1b2c',
    });
    assert.equal(overridden.namespace, 'staging.a1b2c', 'the variable wins');
    assert.equal(
      overridden.client.address,
      'prod.a1b2c.tmprl.cloud:7233',
      'the file keeps what the variables do not set',
    );
    assert.equal(overridden.summary.tls, 'mutual');

    assert.equal(load({ TEMPORAL_CONFIG_FILE: configFile }).client.address, 'default-profile:7233');
    assert.equal(
      load({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod', TEMPORAL_TLS: 'false' }).summary.tls,
      'off',
    );
  });

  test("without TEMPORAL_CONFIG_FILE the SDK's default file is read: $HOME/.config/temporalio/temporal.toml", () => {
    const otherHome = join(dir, 'other-home');
    mkdirSync(join(otherHome, '.config', 'temporalio'), { recursive: true });
    writeFileSync(
      join(otherHome, '.config', 'temporalio', 'temporal.toml'),
      '[profile.default]\naddress = "from-home:7233"\nnamespace = "home-ns"\n',
    );
    const env = { HOME: otherHome };
    const options = loadTemporalConnectionOptions({ settings: parseTemporalSettings(env), env });
    assert.equal(options.client.address, 'from-home:7233');
    assert.equal(options.namespace, 'home-ns');
    assert.equal(options.summary.profile, 'default');
  });

  test('a client certificate without its key (and the reverse) names both variables', () => {
    const [certOnly] = problemsOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert });
    assert.match(certOnly!, /^TEMPORAL_TLS_CLIENT_CERT_PATH: .*TEMPORAL_TLS_CLIENT_KEY_PATH/);
    const [keyOnly] = problemsOf({ TEMPORAL_TLS_CLIENT_KEY_DATA: 'key text' });
    assert.match(keyOnly!, /^TEMPORAL_TLS_CLIENT_KEY_DATA: .*TEMPORAL_TLS_CLIENT_CERT_PATH/);
  });

  test('a certificate in the profile file and no key anywhere is refused too (the SDK would drop it silently)', () => {
    const configFile = writeProfileFile(
      'half.toml',
      `[profile.default.tls]\nclient_cert_path = "${files.cert}"\n`,
    );
    const [problem] = problemsOf({ TEMPORAL_CONFIG_FILE: configFile });
    assert.match(
      problem!,
      /TEMPORAL_TLS_CLIENT_CERT_PATH \(or tls\.client_cert_path .*half\.toml\).*TEMPORAL_TLS_CLIENT_KEY_PATH/,
    );
  });

  test('unreadable files name the variable and the path', () => {
    const missing = join(dir, 'nope', 'client.key');
    assert.deepEqual(
      problemsOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert, TEMPORAL_TLS_CLIENT_KEY_PATH: missing }),
      [`TEMPORAL_TLS_CLIENT_KEY_PATH: cannot read ${missing} (ENOENT: no such file or directory)`],
    );
    const configFile = writeProfileFile(
      'bad-ca.toml',
      `[profile.default.tls]\nserver_ca_cert_path = "${missing}"\n`,
    );
    assert.match(
      problemsOf({ TEMPORAL_CONFIG_FILE: configFile })[0]!,
      /^tls\.server_ca_cert_path \(profile "default" of .*bad-ca\.toml\): cannot read .*client\.key/,
    );
    assert.match(
      problemsOf({ TEMPORAL_CONFIG_FILE: join(dir, 'absent.toml') })[0]!,
      /^TEMPORAL_CONFIG_FILE: cannot read .*absent\.toml \(ENOENT/,
    );
  });

  test('a profile that is not in the file, and a file that is not valid, are named', () => {
    const configFile = writeProfileFile('one.toml', '[profile.default]\naddress = "x:7233"\n');
    assert.deepEqual(problemsOf({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' }), [
      `TEMPORAL_PROFILE: no profile "prod" in the Temporal config file ${configFile} (it has: default)`,
    ]);
    const typo = writeProfileFile('typo.toml', '[profile.default]\nadress = "x:7233"\n');
    assert.match(
      problemsOf({ TEMPORAL_CONFIG_FILE: typo })[0]!,
      /^TEMPORAL_CONFIG_FILE: .*typo\.toml is not a valid profile file: .*adress/,
    );
  });

  test('bad values are named with what to write instead, never echoing a secret', () => {
    const problems = problemsOf({
      TEMPORAL_ADDRESS: 'https://newsroom.a1b2c.tmprl.cloud:7233',
      TEMPORAL_TLS: 'on',
      TEMPORAL_TLS_CERT_PATH: files.cert,
      TEMPORAL_TLS_KEY: files.key,
      TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true',
      TEMPORAL_API_KEY: 'secret-api-key',
    });
    const text = problems.join('\n');
    assert.match(text, /TEMPORAL_ADDRESS: must be host:port without a scheme/);
    assert.match(text, /TEMPORAL_TLS: must be true or false/);
    assert.match(text, /TEMPORAL_TLS_CERT_PATH: is not read: use TEMPORAL_TLS_CLIENT_CERT_PATH/);
    assert.match(text, /TEMPORAL_TLS_KEY: is not read: use TEMPORAL_TLS_CLIENT_KEY_PATH/);
    assert.match(text, /TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: is not supported by the TypeScript SDK/);
    assert.equal(text.includes('secret'), false, text);
    // Rules across variables are checked once every single value is valid (zod skips refinements before).
    const both = problemsOf({
      TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: files.key,
      TEMPORAL_TLS_CLIENT_KEY_DATA: 'secret key text',
    }).join('\n');
    assert.match(
      both,
      /^TEMPORAL_TLS_CLIENT_KEY_DATA: and TEMPORAL_TLS_CLIENT_KEY_PATH are both set; set one of them$/,
    );
  });

  test('TLS switched off while TLS files are set, and an API key beside an authorization header, are refused', () => {
    assert.match(
      problemsOf({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca })[0]!,
      /^TEMPORAL_TLS: is false but TEMPORAL_TLS_SERVER_CA_CERT_PATH is set/,
    );
    const [problem] = problemsOf({ TEMPORAL_API_KEY: 'k1', TEMPORAL_GRPC_META_AUTHORIZATION: 'Bearer k2' });
    assert.match(problem!, /^TEMPORAL_API_KEY: and an authorization header/);
    assert.equal(problem!.includes('k1') || problem!.includes('k2'), false);
  });

  test('the shape and refinement merge into a larger environment schema', () => {
    const envSchema = z
      .object({ PORT: z.coerce.number().default(8000), ...temporalEnvShape })
      .superRefine((env, ctx) => refineTemporalSettings(env, ctx));
    const parsed = envSchema.safeParse({ PORT: '9000', TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert });
    assert.equal(parsed.success, false);
    assert.deepEqual(
      parsed.error?.issues.map((i) => i.path[0]),
      ['TEMPORAL_TLS_CLIENT_CERT_PATH'],
    );
    const ok = envSchema.parse({ PORT: '9000', TEMPORAL_TLS: '1', TEMPORAL_NAMESPACE: ' ns ' });
    assert.deepEqual([ok.PORT, ok.TEMPORAL_TLS, ok.TEMPORAL_NAMESPACE], [9000, true, 'ns']);
  });

  test('the loader reads the files once at start: a certificate rotated later needs a restart', () => {
    const rotating = join(dir, 'rotating.pem');
    writeFileSync(rotating, 'first');
    const options = load({
      TEMPORAL_TLS_CLIENT_CERT_PATH: rotating,
      TEMPORAL_TLS_CLIENT_KEY_PATH: files.key,
    });
    writeFileSync(rotating, 'second');
    const tls = options.client.tls;
    assert.ok(tls && typeof tls === 'object');
    assert.equal(Buffer.from(tls.clientCertPair!.crt).toString(), 'first');
    assert.equal(readFileSync(rotating, 'utf8'), 'second');
  });
});
