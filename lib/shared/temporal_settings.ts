// The Temporal connection variables as validated values: the names the Temporal SDK's environment configuration
// (`@temporalio/envconfig`) and the `temporal` CLI read, checked strictly and with messages that name the
// variable. Part of the process's one environment schema (lib/shared/config.ts); the connection options are built
// from them by lib/temporal/connection_options.ts, which also reads the files they name.
import { z } from 'zod';

const optionalText = z
  .string()
  .optional()
  .transform((v) => {
    const trimmed = v?.trim();
    return trimmed ? trimmed : undefined;
  });

// Strict where the SDK is lax: it takes only '1' and 'true' as true and everything else ('on', 'yes') as false.
const optionalSwitch = z
  .string()
  .optional()
  .transform((v) => v?.trim().toLowerCase() || undefined)
  .pipe(z.enum(['true', 'false', '1', '0'], { message: 'must be true or false (or 1 or 0)' }).optional())
  .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1'));

const address = optionalText.refine(
  (v) => v === undefined || /^(\[[0-9A-Fa-f:.]+\]|[^\s/:[\]]+)(:\d{1,5})?$/.test(v),
  'must be host:port without a scheme or path, e.g. eu-west-1.aws.api.temporal.io:7233',
);

/** Names other tools use for the same thing; setting one is a mistake we name instead of ignoring it. */
export const RENAMED_TEMPORAL_VARIABLES: Record<string, string> = {
  TEMPORAL_TLS_CA_PATH: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  TEMPORAL_TLS_CA: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  TEMPORAL_TLS_CERT_PATH: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_CERT: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY_PATH: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  TEMPORAL_TLS_KEY: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
};

const renamed = (to: string) =>
  z
    .string()
    .optional()
    .refine((v) => v === undefined || v.trim() === '', {
      message: `is not read: use ${to} (the name the Temporal SDK and CLI read)`,
    });

/**
 * The Temporal variables as a zod shape, to merge into the process's one environment schema (with
 * `refineTemporalSettings` in its superRefine). Values stay raw strings here: files are read by
 * `loadTemporalConnectionOptions`, which can name the path that failed.
 */
export const temporalEnvShape = {
  TEMPORAL_ADDRESS: address,
  TEMPORAL_NAMESPACE: optionalText,
  TEMPORAL_API_KEY: optionalText,
  TEMPORAL_TLS: optionalSwitch,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: optionalText,
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: optionalText,
  TEMPORAL_TLS_CLIENT_CERT_PATH: optionalText,
  TEMPORAL_TLS_CLIENT_CERT_DATA: optionalText,
  TEMPORAL_TLS_CLIENT_KEY_PATH: optionalText,
  TEMPORAL_TLS_CLIENT_KEY_DATA: optionalText,
  TEMPORAL_TLS_SERVER_NAME: optionalText,
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: optionalSwitch.refine((v) => v !== true, {
    message:
      'is not supported by the TypeScript SDK (its TLS options have no such switch); ' +
      "set TEMPORAL_TLS_SERVER_NAME to the name in the server's certificate instead",
  }),
  TEMPORAL_PROFILE: optionalText,
  TEMPORAL_CONFIG_FILE: optionalText,
  ...Object.fromEntries(Object.entries(RENAMED_TEMPORAL_VARIABLES).map(([from, to]) => [from, renamed(to)])),
};

/** The subset of a superRefine context this module needs (any zod object containing our shape fits). */
export interface IssueSink {
  addIssue(issue: { code: 'custom'; path: string[]; message: string }): void;
}

export type TemporalEnv = z.infer<z.ZodObject<typeof temporalEnvShape>>;

const PAIRS = [
  ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_DATA'],
  ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_DATA'],
  ['TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_DATA'],
] as const;

/** Rules across variables: one source per file, a client certificate only with its key, no TLS material with TLS off. */
export function refineTemporalSettings(env: TemporalEnv, ctx: IssueSink): void {
  for (const [path, data] of PAIRS) {
    if (env[path] && env[data]) {
      ctx.addIssue({ code: 'custom', path: [data], message: `and ${path} are both set; set one of them` });
    }
  }
  const cert = env.TEMPORAL_TLS_CLIENT_CERT_PATH ?? env.TEMPORAL_TLS_CLIENT_CERT_DATA;
  const key = env.TEMPORAL_TLS_CLIENT_KEY_PATH ?? env.TEMPORAL_TLS_CLIENT_KEY_DATA;
  if (cert && !key) {
    ctx.addIssue({
      code: 'custom',
      path: [
        env.TEMPORAL_TLS_CLIENT_CERT_PATH ? 'TEMPORAL_TLS_CLIENT_CERT_PATH' : 'TEMPORAL_TLS_CLIENT_CERT_DATA',
      ],
      message:
        'is set but TEMPORAL_TLS_CLIENT_KEY_PATH (or TEMPORAL_TLS_CLIENT_KEY_DATA) is not: ' +
        'mTLS needs the client certificate and its private key',
    });
  }
  if (key && !cert) {
    ctx.addIssue({
      code: 'custom',
      path: [
        env.TEMPORAL_TLS_CLIENT_KEY_PATH ? 'TEMPORAL_TLS_CLIENT_KEY_PATH' : 'TEMPORAL_TLS_CLIENT_KEY_DATA',
      ],
      message:
        'is set but TEMPORAL_TLS_CLIENT_CERT_PATH (or TEMPORAL_TLS_CLIENT_CERT_DATA) is not: ' +
        'mTLS needs the client certificate and its private key',
    });
  }
  if (env.TEMPORAL_TLS === false) {
    const material = [...PAIRS.flat(), 'TEMPORAL_TLS_SERVER_NAME' as const].filter((name) => env[name]);
    if (material.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['TEMPORAL_TLS'],
        message: `is false but ${material.join(', ')} ${material.length === 1 ? 'is' : 'are'} set; drop one or the other`,
      });
    }
  }
}

/** Our Temporal variables, validated: the input of `loadTemporalConnectionOptions`. */
export const temporalSettingsSchema = z.object(temporalEnvShape).superRefine(refineTemporalSettings);
export type TemporalSettings = z.infer<typeof temporalSettingsSchema>;
