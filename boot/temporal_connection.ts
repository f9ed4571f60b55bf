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
