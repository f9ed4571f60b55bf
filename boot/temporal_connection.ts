import type { Config } from '../lib/shared/config.ts';
import type { Logger } from '../lib/shared/logger.ts';
import {
  loadTemporalConnectionOptions,
  type TemporalConnectionOptions,
  TemporalSettingsError,
} from '../lib/temporal/connection_options.ts';

/**
 * How this process reaches Temporal, from the validated TEMPORAL_* settings, the SDK's profile file and the
 * TEMPORAL_GRPC_META_* headers of `env`: the options for the client and the worker, and the configuration with
 * the namespace and address they resolve to (a profile may name them). Logs the summary (address, namespace,
 * TLS mode, whether an API key is set), never the options. A setting that cannot work (a certificate without
 * its key, an unreadable file, an unknown profile) stops the process naming the variable, as parseConfig does.
 */
export function loadTemporalConnectionOrExit(
  config: Config,
  env: Record<string, string | undefined>,
  logger: Logger,
  overrides: { address?: string } = {},
): { connection: TemporalConnectionOptions; config: Config } {
  let connection: TemporalConnectionOptions;
  try {
    const settings = overrides.address
      ? { ...config.temporal.settings, TEMPORAL_ADDRESS: overrides.address }
      : config.temporal.settings;
    connection = loadTemporalConnectionOptions({ settings, env });
  } catch (error) {
    if (error instanceof TemporalSettingsError) {
      console.error(`${error.message}\nFix the setting(s) above and start again.`);
      process.exit(78); // EX_CONFIG, as boot/load_config.ts
    }
    throw error;
  }
  logger.info({ temporal: connection.summary }, 'Temporal connection settings');
  for (const warning of connection.warnings) logger.warn({ temporal: connection.summary }, warning);
  return {
    connection,
    config: {
      ...config,
      temporal: {
        ...config.temporal,
        address: connection.summary.address,
        namespace: connection.namespace,
      },
    },
  };
}

/**
 * `npm start`'s choice: an external Temporal when TEMPORAL_ADDRESS, TEMPORAL_PROFILE or TEMPORAL_CONFIG_FILE is
 * set (then every TEMPORAL_* setting applies, profile file included); otherwise the embedded dev server. The
 * default profile file (~/.config/temporalio/temporal.toml) alone does not count: it is often the CLI's setup for
 * a production namespace, which a demo on a laptop must not reach by surprise.
 */
export function usesExternalTemporal(config: Config): boolean {
  const s = config.temporal.settings;
  return Boolean(s.TEMPORAL_ADDRESS || s.TEMPORAL_PROFILE || s.TEMPORAL_CONFIG_FILE);
}

/** Settings that an embedded dev server ignores (it speaks plain gRPC, without keys), by name. */
export function ignoredByEmbeddedTemporal(config: Config): string[] {
  return Object.entries(config.temporal.settings)
    .filter(([name, value]) => value !== undefined && name !== 'TEMPORAL_NAMESPACE')
    .map(([name]) => name);
}

/** The connection to `npm start`'s own dev server: its address, the namespace, nothing else. */
export function loadEmbeddedTemporalConnection(
  config: Config,
  address: string,
  logger: Logger,
): { connection: TemporalConnectionOptions; config: Config } {
  const settings = {
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: config.temporal.settings.TEMPORAL_NAMESPACE,
  };
  return loadTemporalConnectionOrExit(
    { ...config, temporal: { ...config.temporal, settings: settings as Config['temporal']['settings'] } },
    {},
    logger,
  );
}
