// How this process reaches Temporal: address, namespace, TLS / mTLS and an API key, for the client
// (`Connection`) and the worker (`NativeConnection`). The settings are the SDK's own environment configuration
// (`@temporalio/envconfig` 1.24.0): the TEMPORAL_* names the `temporal` CLI reads too, and its TOML profile file
// (TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml; profile TEMPORAL_PROFILE, else "default").
// Environment variables win over the profile file, field by field — the SDK's and the CLI's rule, kept so that
// `temporal workflow list` with the same environment reaches the same cluster as the worker.
//
// Our part is validation with clear messages (the zod shape in lib/shared/temporal_settings.ts, part of the one
// configuration schema; re-exported here) and the checks the SDK skips: it silently drops a client certificate
// given without its key (and would then connect without mTLS), ignores a TEMPORAL_CONFIG_FILE that does not
// exist, and reads 'on' as false.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from '@temporalio/client';
import {
  type ClientConfigProfile,
  type ClientConfigTLS,
  type ConfigDataSource,
  loadClientConfig,
  loadClientConfigProfile,
  toClientOptions,
} from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import {
  RENAMED_TEMPORAL_VARIABLES,
  refineTemporalSettings,
  type TemporalSettings,
  temporalEnvShape,
  temporalSettingsSchema,
} from '../shared/temporal_settings.ts';

// The shape lives on the ground floor (lib/shared may import nothing of lib/temporal); callers here keep their names.
export { refineTemporalSettings, type TemporalSettings, temporalEnvShape, temporalSettingsSchema };

/** Where the client and worker connect when neither the environment nor a profile names an address. */
export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

/** Bad Temporal settings: names every offending variable (or profile-file key), never a secret's value. */
export class TemporalSettingsError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(
      `Invalid Temporal connection settings:\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}`,
    );
    this.name = 'TemporalSettingsError';
  }
}

/** Parses the Temporal variables of an environment; throws TemporalSettingsError naming each bad one. */
export function parseTemporalSettings(env: Record<string, string | undefined>): TemporalSettings {
  const parsed = temporalSettingsSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new TemporalSettingsError(
    parsed.error.issues.map((issue) => ({
      variable: String(issue.path[0] ?? '(environment)'),
      message: issue.message,
    })),
  );
}

/** What a process logs at start: where it connects and how, without secrets. */
export interface TemporalConnectionSummary {
  address: string;
  namespace: string;
  /** off: plain text; on: TLS checking the server; mutual: TLS with our client certificate too. */
  tls: 'off' | 'on' | 'mutual';
  serverName: string | undefined;
  apiKey: boolean;
  /** The profile of the Temporal config file that contributed settings, if any. */
  profile: string | undefined;
  /** Names (not values) of extra gRPC metadata sent with every call (TEMPORAL_GRPC_META_*). */
  grpcMetadata: string[];
}

/** Options for `Connection.connect`/`Connection.lazy` and `NativeConnection.connect`, and the namespace. */
export interface TemporalConnectionOptions {
  client: ConnectionOptions;
  worker: NativeConnectionOptions;
  namespace: string;
  summary: TemporalConnectionSummary;
  /** Settings that work but deserve a log line (e.g. an API key sent without TLS). */
  warnings: string[];
}

// Env names of each TLS file, and the profile-file key, for messages about a value wherever it came from.
const TLS_SOURCES = {
  serverCACert: {
    path: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    data: 'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
    key: 'server_ca_cert',
  },
  clientCert: {
    path: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
    data: 'TEMPORAL_TLS_CLIENT_CERT_DATA',
    key: 'client_cert',
  },
  clientKey: {
    path: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
    data: 'TEMPORAL_TLS_CLIENT_KEY_DATA',
    key: 'client_key',
  },
} as const;

/** The environment the SDK loader sees: ours as validated, plus what it needs to find the profile file. */
function toLoaderEnv(
  settings: TemporalSettings,
  env: Record<string, string | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    // TEMPORAL_GRPC_META_* stays for the SDK to read; every other TEMPORAL_* comes from `settings`.
    if (value !== undefined && (!name.startsWith('TEMPORAL_') || name.startsWith('TEMPORAL_GRPC_META_')))
      out[name] = value;
  }
  for (const [name, value] of Object.entries(settings)) {
    if (name in RENAMED_TEMPORAL_VARIABLES || value === undefined) continue;
    out[name] = typeof value === 'boolean' ? String(value) : value;
  }
  return out;
}

function fileLabel(settings: TemporalSettings): string {
  return settings.TEMPORAL_CONFIG_FILE
    ? `the Temporal config file ${settings.TEMPORAL_CONFIG_FILE}`
    : 'the Temporal config file (~/.config/temporalio/temporal.toml)';
}

// "ENOENT: no such file or directory" without the path repeated after the comma.
function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (error as NodeJS.ErrnoException)?.code ? (message.split(',')[0] ?? message) : message;
}

/**
 * Checks the merged TLS settings and reads the files they name, so that a certificate without its key, or a
 * path that cannot be read, is reported with its variable (or profile-file key) before any connection.
 */
function readTlsFiles(
  tls: ClientConfigTLS | undefined,
  settings: TemporalSettings,
  profile: string,
  problems: { variable: string; message: string }[],
): ClientConfigTLS | undefined {
  if (!tls) return tls;
  const origin = `(profile "${profile}" of ${fileLabel(settings)})`;
  if (Boolean(tls.clientCert) !== Boolean(tls.clientKey)) {
    const [has, lacks] = tls.clientCert
      ? [TLS_SOURCES.clientCert, TLS_SOURCES.clientKey]
      : [TLS_SOURCES.clientKey, TLS_SOURCES.clientCert];
    problems.push({
      variable: `${has.path} (or tls.${has.key}_path ${origin})`,
      message: `is set but ${lacks.path} (or tls.${lacks.key}_path) is not: mTLS needs the client certificate and its private key`,
    });
  }
  const read = (which: keyof typeof TLS_SOURCES): ConfigDataSource | undefined => {
    const source = tls[which];
    if (!source || !('path' in source)) return source;
    const names = TLS_SOURCES[which];
    const variable = settings[names.path] === source.path ? names.path : `tls.${names.key}_path ${origin}`;
    try {
      return { data: readFileSync(source.path) };
    } catch (error) {
      problems.push({ variable, message: `cannot read ${source.path} (${describeError(error)})` });
      return undefined;
    }
  };
  return {
    ...tls,
    serverCACert: read('serverCACert'),
    clientCert: read('clientCert'),
    clientKey: read('clientKey'),
  };
}

/**
 * Builds the client and worker connection options from validated settings and the SDK's profile file.
 * `env` is the process environment: the profile file's location (HOME, XDG_CONFIG_HOME) and any
 * TEMPORAL_GRPC_META_* headers come from it. Throws TemporalSettingsError naming what is wrong.
 */
export function loadTemporalConnectionOptions(input: {
  settings: TemporalSettings;
  env: Record<string, string | undefined>;
  defaultAddress?: string;
}): TemporalConnectionOptions {
  const { settings } = input;
  const loaderEnv = toLoaderEnv(settings, input.env);
  const problems: { variable: string; message: string }[] = [];

  // The SDK treats a missing TEMPORAL_CONFIG_FILE like no file at all; a named file that is not there is a mistake.
  let configSource: ConfigDataSource | undefined;
  if (settings.TEMPORAL_CONFIG_FILE) {
    try {
      configSource = { data: readFileSync(settings.TEMPORAL_CONFIG_FILE) };
    } catch (error) {
      throw new TemporalSettingsError([
        {
          variable: 'TEMPORAL_CONFIG_FILE',
          message: `cannot read ${settings.TEMPORAL_CONFIG_FILE} (${describeError(error)})`,
        },
      ]);
    }
  }

  let profiles: Record<string, ClientConfigProfile>;
  try {
    profiles = loadClientConfig({
      configSource,
      configFileStrict: true,
      overrideEnvVars: loaderEnv,
    }).profiles;
  } catch (error) {
    throw new TemporalSettingsError([
      {
        variable: settings.TEMPORAL_CONFIG_FILE ? 'TEMPORAL_CONFIG_FILE' : '(Temporal config file)',
        message: `${fileLabel(settings)} is not a valid profile file: ${describeError(error)}`,
      },
    ]);
  }
  const profileName = settings.TEMPORAL_PROFILE ?? 'default';
  if (settings.TEMPORAL_PROFILE && !profiles[profileName]) {
    const known = Object.keys(profiles);
    throw new TemporalSettingsError([
      {
        variable: 'TEMPORAL_PROFILE',
        message:
          `no profile "${profileName}" in ${fileLabel(settings)}` +
          (known.length ? ` (it has: ${known.join(', ')})` : ' (no profiles found)'),
      },
    ]);
  }

  // The SDK's merge: the profile (if any), then every environment variable over it.
  const merged = loadClientConfigProfile({
    profile: settings.TEMPORAL_PROFILE,
    configSource,
    configFileStrict: true,
    overrideEnvVars: loaderEnv,
  });

  const tls = merged.tls?.disabled ? merged.tls : readTlsFiles(merged.tls, settings, profileName, problems);
  const withData: ClientConfigProfile = { ...merged, tls };
  const metadataNames = Object.keys(merged.grpcMeta ?? {});
  if (merged.apiKey && metadataNames.some((name) => name.toLowerCase() === 'authorization')) {
    problems.push({
      variable: 'TEMPORAL_API_KEY',
      message:
        'and an authorization header (TEMPORAL_GRPC_META_AUTHORIZATION or grpc_meta) are both set; set one',
    });
  }
  if (problems.length > 0) throw new TemporalSettingsError(problems);

  const { connectionOptions, namespace } = toClientOptions(withData);
  const addressChosen = connectionOptions.address ?? input.defaultAddress ?? DEFAULT_TEMPORAL_ADDRESS;
  const tlsOption = connectionOptions.tls;
  const tlsMode: TemporalConnectionSummary['tls'] = !tlsOption
    ? 'off'
    : typeof tlsOption === 'object' && tlsOption.clientCertPair
      ? 'mutual'
      : 'on';
  const metadata =
    connectionOptions.metadata && metadataNames.length > 0 ? connectionOptions.metadata : undefined;
  const shared = {
    address: addressChosen,
    ...(tlsOption !== undefined ? { tls: tlsOption } : {}),
    ...(connectionOptions.apiKey ? { apiKey: connectionOptions.apiKey } : {}),
    ...(metadata ? { metadata } : {}),
  };
  if (connectionOptions.apiKey && tlsMode === 'off' && !isLoopbackAddress(addressChosen)) {
    // The key is a bearer credential: in clear text it is anyone's who sees one packet on the way.
    throw new TemporalSettingsError([
      {
        variable: 'TEMPORAL_API_KEY',
        message: `would be sent without TLS to ${addressChosen}: turn TLS on (TEMPORAL_TLS=true); plain text is only for a Temporal on a loopback address`,
      },
    ]);
  }
  const warnings: string[] = [];
  if (connectionOptions.apiKey && tlsMode === 'off') {
    warnings.push(
      'TEMPORAL_API_KEY is sent without TLS (TEMPORAL_TLS=false): only do this over a link you trust.',
    );
  }
  return {
    client: { ...shared },
    worker: { ...shared },
    namespace: namespace ?? DEFAULT_TEMPORAL_NAMESPACE,
    summary: {
      address: addressChosen,
      namespace: namespace ?? DEFAULT_TEMPORAL_NAMESPACE,
      tls: tlsMode,
      serverName: typeof tlsOption === 'object' && tlsOption ? tlsOption.serverNameOverride : undefined,
      apiKey: Boolean(connectionOptions.apiKey),
      profile: profiles[profileName] ? profileName : undefined,
      grpcMetadata: metadataNames,
    },
    warnings,
  };
}

/** True for `localhost`, 127.0.0.0/8 and ::1, with or without a port. */
function isLoopbackAddress(address: string): boolean {
  const host = address.startsWith('[')
    ? address.slice(1, address.indexOf(']'))
    : address.replace(/:\d+$/, '');
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
