// The environment `npm start` gives its web and worker processes: its database, and its own Temporal dev server.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporalEnvShape } from '../lib/shared/temporal_settings.ts';

/** process.env without the names it holds no value for: a child's environment is strings only. */
export function withoutUndefined(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}

/**
 * The environment of the web and worker processes: ours, with DATABASE_URL set, and with our own dev server as
 * their only Temporal (every other connection setting removed, and no profile file: the dev server speaks plain
 * gRPC without keys, boot/temporal_connection.ts).
 */
export function childEnv(
  dataDir: string,
  databaseUrl: string,
  devServerAddress: string | undefined,
  temporalUiUrl: string | undefined,
) {
  const env = withoutUndefined(process.env);
  if (devServerAddress) {
    for (const name of Object.keys(temporalEnvShape)) if (name !== 'TEMPORAL_NAMESPACE') delete env[name];
    for (const name of Object.keys(env)) if (name.startsWith('TEMPORAL_GRPC_META_')) delete env[name];
    env.TEMPORAL_ADDRESS = devServerAddress;
    env.TEMPORAL_CONFIG_FILE = writeNoProfileFile(dataDir);
  }
  if (temporalUiUrl) env.TEMPORAL_UI_URL = temporalUiUrl;
  env.DATABASE_URL = databaseUrl;
  return env;
}

/**
 * A Temporal profile file with an empty default profile, for the web and worker processes under the embedded dev
 * server: with it they never read the user's ~/.config/temporalio/temporal.toml (often a production namespace).
 */
function writeNoProfileFile(dataDir: string): string {
  const file = join(dataDir, 'temporal-client.toml');
  writeFileSync(
    file,
    '# Written by npm start: its web and worker processes reach its own dev server, never a profile of yours.\n' +
      '[profile.default]\n',
  );
  return file;
}
