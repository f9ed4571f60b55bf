import { type Config, ConfigError, parseConfig } from '../lib/shared/config.ts';

/** Parses the environment or exits non-zero with a message naming each bad variable (never half-starts). */
export function loadConfigOrExit(env: Record<string, string | undefined>): Config {
  try {
    return parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
}

/** Exits naming `variable` when a production entry needs a value that has no embedded default. */
export function requireSetting<T>(value: T | undefined, variable: string, why: string): T {
  if (value === undefined) {
    console.error(`Invalid configuration:\n  ${variable}: is required ${why}.`);
    process.exit(78);
  }
  return value;
}
