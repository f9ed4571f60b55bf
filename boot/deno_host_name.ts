// Imported first by main_deno.ts. pino reads os.hostname() when its module loads, and Deno answers that only
// with --allow-sys, a permission Deno Deploy's settings and `deno task web` do not grant: a web instance would
// die before its first line of log. Our logs never print a host name (lib/shared/logger.ts sets pino's `base`),
// so where the permission is missing the host name is read from HOSTNAME (or is "deno") instead.
import os from 'node:os';

declare const Deno: {
  permissions: { querySync(descriptor: { name: 'sys'; kind: 'hostname' }): { state: string } };
  env: { get(name: string): string | undefined };
};

if (Deno.permissions.querySync({ name: 'sys', kind: 'hostname' }).state !== 'granted') {
  const name = Deno.env.get('HOSTNAME') || 'deno';
  os.hostname = () => name;
}
