import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GeneratedCredentials } from '../lib/auth/bootstrap.ts';

/** The file under the data folder that holds first-run credentials until someone stores them and deletes it. */
export const FIRST_RUN_CREDENTIALS_FILE = 'first-run-credentials.txt';

/** The data folder: LIFELINE_DATA_DIR, or `.data` in the checkout (where `npm start` keeps its state too). */
export function resolveDataDir(configured: string | undefined): string {
  return resolve(configured ?? join(dirname(fileURLToPath(import.meta.url)), '..', '.data'));
}

function credentialLines(generated: GeneratedCredentials): string[] {
  const lines: string[] = [];
  if (generated.adminEmail)
    lines.push(`  Admin login:     ${generated.adminEmail} / ${generated.adminPassword}`);
  if (generated.apiKey) lines.push(`  Admin API key:   ${generated.apiKey}`);
  if (generated.webhookSecret) lines.push(`  Webhook secret:  ${generated.webhookSecret}`);
  return lines;
}

/** Writes `text` to `file`, readable and writable by this user only (0600), replacing an earlier one. */
function writePrivateFile(file: string, text: string): void {
  const fd = openSync(file, 'w', 0o600);
  try {
    // The mode given to open applies only when the file is created: an existing one is narrowed here.
    fchmodSync(fd, 0o600);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Hands over the credentials this start generated (nothing on later starts: only hashes are stored). Standard
 * error is kept by container runtimes and log shippers, so the credentials go to FIRST_RUN_CREDENTIALS_FILE in
 * `dataDir` (the folder 0700, the file 0600) and stderr names the file; only an interactive terminal
 * (`interactive`: stderr is a TTY) sees them as well. If the file cannot be written, stderr says so and how to
 * get in anyway (`npm run admin:reset`), still without the credentials. Returns the file, if written.
 */
export function reportGeneratedCredentials(
  generated: GeneratedCredentials,
  options: { dataDir: string; interactive: boolean; write?: (s: string) => void },
): string | undefined {
  const write = options.write ?? ((s: string) => process.stderr.write(s));
  const lines = credentialLines(generated);
  if (lines.length === 0) return undefined;
  const file = join(options.dataDir, FIRST_RUN_CREDENTIALS_FILE);
  let written: string | undefined;
  try {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    chmodSync(options.dataDir, 0o700);
    writePrivateFile(
      file,
      `# Lifeline first-run credentials, generated ${new Date().toISOString()}. They are shown once and stored\n` +
        '# nowhere else (only their hashes): keep them in a password manager, then delete this file.\n' +
        `${lines.join('\n')}\n`,
    );
    written = file;
  } catch (error) {
    write(
      `\nFirst run: credentials were generated but could not be written to ${file} ` +
        `(${error instanceof Error ? error.message : String(error)}). Set LIFELINE_DATA_DIR to a writable ` +
        'folder, or sign in after `npm run admin:reset` and create an API key in the operations page.\n\n',
    );
  }
  if (options.interactive) {
    write(`\nFirst run — these credentials are shown once; store them now:\n${lines.join('\n')}\n`);
    if (written) write(`  (also in ${written}, readable by this user only; delete it once stored)\n`);
    write('\n');
  } else if (written) {
    write(
      `\nFirst run: credentials were generated and written to ${written} (readable by this user only). ` +
        'Store them, then delete the file.\n\n',
    );
  }
  return written;
}
