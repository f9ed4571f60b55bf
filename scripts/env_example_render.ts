// The text of .env.example, made from the configuration schema itself (lib/shared/config.ts): every variable the
// schema reads, in its order, grouped by the part of lib/shared/config/ that declares it, with the default the
// schema gives an unset variable. A new setting, or a changed default, changes this text; the committed file is
// compared with it by tests/scripts/env_example.test.ts, so the example cannot drift from what processes read.
// A first block holds the variables only compose.yaml reads (images, its databases' passwords, host ports).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { analyticsEnv } from '../lib/shared/config/analytics.ts';
import { authEnv } from '../lib/shared/config/auth.ts';
import { bitlyEnv } from '../lib/shared/config/bitly.ts';
import { cdnEnv } from '../lib/shared/config/cdn.ts';
import { databaseEnv } from '../lib/shared/config/database.ts';
import { escrowEnv } from '../lib/shared/config/escrow.ts';
import { failoverEnv } from '../lib/shared/config/failover.ts';
import { identityEnv } from '../lib/shared/config/identity.ts';
import { linksEnv } from '../lib/shared/config/links.ts';
import { rateLimitsEnv } from '../lib/shared/config/rate_limits.ts';
import { redirectEnv } from '../lib/shared/config/redirect.ts';
import { redisEnv } from '../lib/shared/config/redis.ts';
import { safetyEnv } from '../lib/shared/config/safety.ts';
import { serverEnv } from '../lib/shared/config/server.ts';
import { temporalEnv } from '../lib/shared/config/temporal.ts';
import { tracingEnv } from '../lib/shared/config/tracing.ts';
import { wordpressEnv } from '../lib/shared/config/wordpress.ts';
import { envSchema } from '../lib/shared/config.ts';
import { RENAMED_TEMPORAL_VARIABLES } from '../lib/shared/temporal_settings.ts';

/** Each part of the schema and the file under lib/shared/config/ whose first comment line titles its block. */
const PARTS: { file: string; env: z.ZodObject }[] = [
  { file: 'server.ts', env: serverEnv },
  { file: 'database.ts', env: databaseEnv },
  { file: 'redis.ts', env: redisEnv },
  { file: 'redirect.ts', env: redirectEnv },
  { file: 'temporal.ts', env: temporalEnv },
  { file: 'bitly.ts', env: bitlyEnv },
  { file: 'safety.ts', env: safetyEnv },
  { file: 'failover.ts', env: failoverEnv },
  { file: 'wordpress.ts', env: wordpressEnv },
  { file: 'auth.ts', env: authEnv },
  { file: 'identity.ts', env: identityEnv },
  { file: 'rate_limits.ts', env: rateLimitsEnv },
  { file: 'links.ts', env: linksEnv },
  { file: 'analytics.ts', env: analyticsEnv },
  { file: 'escrow.ts', env: escrowEnv },
  { file: 'cdn.ts', env: cdnEnv },
  { file: 'tracing.ts', env: tracingEnv },
];

/**
 * Settings compose.yaml requires (`${NAME:?…}`): written as blank, active lines, so that `docker compose` stops
 * naming the one still blank instead of starting a stack anyone could sign in to with generated credentials.
 */
export const COMPOSE_REQUIRED_SETTINGS = [
  'SHORT_BASE_URL',
  'ADMIN_EMAIL',
  'ADMIN_PASSWORD',
  'BOOTSTRAP_API_KEY',
  'WORDPRESS_WEBHOOK_SECRET',
  'METRICS_TOKEN',
] as const;

/** Lifeline's version (package.json), the tag of the image the example names. */
const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The variables only compose.yaml reads: name, value in the example, and what it is. */
export const COMPOSE_VARIABLES: { name: string; value: string; meaning: string }[] = [
  {
    name: 'LIFELINE_IMAGE',
    value: `ghcr.io/your-org/lifeline:${VERSION}`,
    meaning: "Lifeline's container image (web, worker and the migrate job run it)",
  },
  {
    name: 'LIFELINE_HTTP_PORT',
    value: '8000',
    meaning: 'host port of the proxy in front of the web replicas (short host, UI, API)',
  },
  {
    name: 'TEMPORAL_UI_PORT',
    value: '8080',
    meaning: 'host port of Temporal UI, bound to 127.0.0.1 only',
  },
  {
    name: 'POSTGRES_PASSWORD',
    value: '',
    meaning: "password of the lifeline user of Lifeline's Postgres (required)",
  },
  {
    name: 'POSTGRES_SHARED_BUFFERS',
    value: '1GB',
    meaning:
      "shared_buffers of Lifeline's Postgres: about a quarter of the host's memory (docs/DEPLOYING.md)",
  },
  {
    name: 'POSTGRES_MAX_WAL_SIZE',
    value: '8GB',
    meaning: "max_wal_size of Lifeline's Postgres: WAL between checkpoints (docs/DEPLOYING.md)",
  },
  {
    name: 'TEMPORAL_POSTGRES_PASSWORD',
    value: '',
    meaning: "password of the temporal user of Temporal's own Postgres (required)",
  },
];

/** The value an unset variable takes, as it would be written in an environment file; '' when it has none. */
export function defaultOf(schema: z.ZodType): string {
  const parsed = schema.safeParse(undefined);
  if (!parsed.success) return '';
  const value: unknown = parsed.data;
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object') return Object.keys(value).length === 0 ? '' : JSON.stringify(value);
  return String(value);
}

/** The names the schema reads, in its order, less the names it only refuses (other tools' Temporal names). */
export function settingNames(): string[] {
  return Object.keys(envSchema.shape).filter((name) => !(name in RENAMED_TEMPORAL_VARIABLES));
}

function titleOf(root: string, file: string): string {
  const first = readFileSync(join(root, 'lib', 'shared', 'config', file), 'utf8').split('\n')[0] ?? '';
  return first.replace(/^\/\/\s*/, '').trim();
}

/** The whole .env.example, for the checkout at `root`. */
export function renderEnvExample(root: string): string {
  const shape = envSchema.shape as Record<string, z.ZodType>;
  const names = settingNames();
  const placed = new Set<string>();
  const required = new Set<string>(COMPOSE_REQUIRED_SETTINGS);
  const out: string[] = [
    '# Lifeline settings, one environment variable each. GENERATED by `npm run env:example` from the',
    '# configuration schema (lib/shared/config.ts); do not edit by hand. Meanings: docs/CONFIGURATION.md.',
    '#',
    '# For compose.yaml: copy this file to .env, fill in the blank active lines, uncomment what you change.',
    '# A commented line shows the default an unset variable takes; blank means none (or one derived from',
    '# another setting, as docs/CONFIGURATION.md says). compose.yaml sets DATABASE_URL, REDIS_URL,',
    '# TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, LIFELINE_DATA_DIR, HOST, PORT and WORKER_HEALTH_PORT itself.',
    '',
    '# --- compose.yaml only ---',
  ];
  for (const v of COMPOSE_VARIABLES) out.push(`# ${v.meaning}`, `${v.name}=${v.value}`);
  for (const part of PARTS) {
    const inPart = names.filter((name) => name in part.env.shape && !placed.has(name));
    if (inPart.length === 0) continue;
    out.push('', `# --- ${titleOf(root, part.file)} ---`);
    for (const name of inPart) {
      placed.add(name);
      const value = defaultOf(shape[name]!);
      if (required.has(name)) {
        out.push(`# required by compose.yaml${value ? ` (unset: ${value})` : ''}`, `${name}=`);
      } else {
        out.push(`# ${name}=${value}`);
      }
    }
  }
  const unplaced = names.filter((name) => !placed.has(name));
  if (unplaced.length > 0) {
    out.push('', '# --- other settings ---');
    for (const name of unplaced) out.push(`# ${name}=${defaultOf(shape[name]!)}`);
  }
  return `${out.join('\n')}\n`;
}
