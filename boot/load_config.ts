import { type Config, ConfigError, parseConfig } from '../lib/shared/config.ts';
import { canonicalizeHost } from '../lib/targets/canonical_url.ts';
import { createCanonicalTargetPolicy } from '../lib/targets/target_rule.ts';

/**
 * Parses the environment and checks what the schema alone cannot: every host of ALLOWED_TARGET_HOSTS and
 * SAFETY_TRUSTED_HOSTS has a canonical form (lib/targets/canonical_url.ts), so the target rule built from them
 * at start-up cannot fail later. Throws ConfigError naming each bad variable.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const config = parseConfig(env);
  const problems: { variable: string; message: string }[] = [];
  try {
    createCanonicalTargetPolicy(config);
  } catch (error) {
    const message = (error as Error).message;
    const variable = /^([A-Z_]+):/.exec(message)?.[1] ?? 'ALLOWED_TARGET_HOSTS';
    problems.push({ variable, message: message.replace(/^[A-Z_]+:\s*/, '') });
  }
  for (const host of config.safety.trustedHosts) {
    if (canonicalizeHost(host) === null)
      problems.push({ variable: 'SAFETY_TRUSTED_HOSTS', message: `${host} is not a host name` });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Parses the environment or exits non-zero with a message naming each bad variable (never half-starts). */
export function loadConfigOrExit(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env);
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
