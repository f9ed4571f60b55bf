import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type FileSink, openFileSink } from '../shared/file_sink.ts';
import {
  requireSnapshotCode,
  SNAPSHOT_FILE_MODE,
  SNAPSHOT_FOLDER_MODE,
  type SnapshotWriter,
  type SnapshotWriterOptions,
} from './snapshot_writer.ts';
import type { StaticAnswer } from './static_answer.ts';
import { renderStaticPage, STATIC_PAGE_CSP } from './static_pages.ts';

/** Longest map value nginx reads as one token (its configuration buffer is 4 KiB). */
const NGINX_MAX_VALUE = 4_000;

/**
 * A double-quoted nginx string whose bytes nginx hands back exactly: `\` and `"` escaped, and `$` spelt
 * `${lifeline_dollar}` (a `geo` constant), because map values may contain variables and nginx has no other
 * escape for a dollar sign.
 */
export function toNginxString(value: string, prefix = DEFAULT_NGINX_PREFIX): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\$/g, `\${${prefix}_dollar}`)}"`;
}

/** The variable prefix of the default short domain's configuration (the names it always had). */
export const DEFAULT_NGINX_PREFIX = 'lifeline';

/**
 * The prefix of every nginx variable a domain's configuration defines: `lifeline` for the default short domain,
 * `lifeline_<name>` for another, each character of the name other than a letter or digit written `_` and its
 * two hex digits (`b.example` → `lifeline_b_2eexample`). Distinct names give distinct prefixes, so the maps of
 * every domain can share one nginx `http` block (`lifeline_all_http.conf`).
 */
export function nginxPrefixOf(stored: string): string {
  if (stored === '') return DEFAULT_NGINX_PREFIX;
  const escaped = stored.replace(/[^a-z0-9]/g, (c) => `_${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `${DEFAULT_NGINX_PREFIX}_${escaped}`;
}

/** `map_hash_max_size` for maps of up to `entries` keys (nginx sizes the hash at start; bigger only costs start time). */
export function nginxMapHashMax(entries: number): number {
  let hashMax = 1024;
  while (hashMax < entries * 2) hashMax *= 2;
  return hashMax;
}

/**
 * Which letters of a code are capitals, as `0`/`1` per position up to `length`. nginx compares map keys without
 * regard to case, and codes are case-sensitive (`aB3x` and `Ab3X` may both exist): each key carries this mask,
 * which nginx computes for the request with one anchored regex per position.
 */
export function toCaseMask(code: string, length: number): string {
  let mask = '';
  for (let i = 0; i < length; i++) {
    const c = code.charCodeAt(i);
    mask += c >= 65 && c <= 90 ? '1' : '0';
  }
  return mask;
}

/**
 * nginx: `lifeline_map_entries.conf` (one line per code: `"/code <capitals mask>" "<status>:<cache-control
 * index>:<Location or page>";`) inside the maps of `lifeline_maps.conf`, which `lifeline_http.conf` includes with
 * the map hash sizes (http context), the server-level directives in `lifeline_server.conf`, a complete `nginx.conf`
 * around them, and the pages under `pages/_lifeline/`. Unknown codes answer 404, gone and expired links 410,
 * blocked 451, redirects their status and Location, warn links their interstitial (200, one page per code); every
 * answer carries Lifeline's Cache-Control and `X-Robots-Tag: noindex`. Every variable starts with the domain's
 * prefix (nginxPrefixOf), so several domains' maps live in one `http` block (writeNginxAllDomains).
 */
export async function createNginxWriter(options: SnapshotWriterOptions): Promise<SnapshotWriter> {
  const dir = join(options.outDir, 'nginx');
  const served = join(options.publicDir, 'nginx');
  const p = options.nginxPrefix ?? DEFAULT_NGINX_PREFIX;
  const str = (value: string) => toNginxString(value, p);
  await mkdir(join(dir, 'pages', '_lifeline', 'warn'), { recursive: true, mode: SNAPSHOT_FOLDER_MODE });
  const mode = SNAPSHOT_FILE_MODE;
  const entries: FileSink = await openFileSink(join(dir, 'lifeline_map_entries.conf'), {
    exclusive: true,
    mode,
  });
  const cacheControls = new Map<string, number>();
  const indexOf = (cacheControl: string) => {
    let index = cacheControls.get(cacheControl);
    if (index === undefined) {
      index = cacheControls.size;
      cacheControls.set(cacheControl, index);
    }
    return index;
  };
  const notFoundIndex = indexOf(options.notFound.cacheControl);
  const maskLength = Math.max(1, options.longestCode);
  const maskMaps = Array.from(
    { length: maskLength },
    (_, i) => `map $${p}_key $${p}_cap${i} { "~^/.{${i}}[A-Z]" 1; default 0; }`,
  );
  let count = 0;
  const skipped: string[] = [];

  return {
    async add(answer: StaticAnswer) {
      const code = requireSnapshotCode(answer.code);
      const rest = answer.location ?? answer.page!;
      // One map entry is one line of printable ASCII (every target that passes the target rule is): anything
      // else, or a value over nginx's limit, cannot be written.
      const value = str(`${answer.status}:${indexOf(answer.cacheControl)}:${rest}`);
      if (value.length > NGINX_MAX_VALUE || !/^[\x20-\x7e]+$/.test(value)) {
        skipped.push(code);
        return;
      }
      if (answer.routed)
        await entries.write(`# /${code} has routing rules: this is its default target (ADR 0080)\n`);
      await entries.write(`${str(`/${code} ${toCaseMask(code, maskLength)}`)} ${value};\n`);
      count++;
      if (answer.page === 'warn') {
        await writeFile(
          join(dir, 'pages', '_lifeline', 'warn', `${code}.html`),
          renderStaticPage('warn', answer.destination),
          { mode },
        );
      }
    },
    async finish() {
      await entries.close();
      for (const page of ['not_found', 'gone', 'expired', 'blocked'] as const) {
        await writeFile(join(dir, 'pages', '_lifeline', `${page}.html`), renderStaticPage(page), { mode });
      }
      const ccLines = [...cacheControls].map(([value, index]) => `  ${index} ${str(value)};`);
      await writeFile(
        join(dir, 'lifeline_maps.conf'),
        [
          `# Lifeline static snapshot of ${options.shortBaseUrl}, generated ${options.generatedAt}: its maps, every`,
          `# variable named ${p}_*. Included by lifeline_http.conf (this domain alone) or lifeline_all_http.conf (every`,
          '# domain in one http block). Links with routing rules (language, device, country) answer their default',
          '# target here, for every reader: a static file cannot choose; their entries are marked.',
          `geo $${p}_dollar { default "$"; }`,
          '# The path of the request as sent (before decoding), without its query string.',
          `map $request_uri $${p}_key {`,
          `  "~^(?<${p}_p>[^?]*)" $${p}_p;`,
          '  default $request_uri;',
          '}',
          '# Which letters are capitals (nginx compares map keys case-insensitively; codes are case-sensitive).',
          ...maskMaps,
          `map $${p}_key $${p}_caps { default "${maskMaps.map((_, i) => `$${p}_cap${i}`).join('')}"; }`,
          `map "$${p}_key $${p}_caps" $${p}_answer {`,
          `  default ${str(`${options.notFound.status}:${notFoundIndex}:not_found`)};`,
          `  include ${join(served, 'lifeline_map_entries.conf')};`,
          '}',
          `map $${p}_answer $${p}_cc_index {`,
          `  "~^[0-9]+:(?<${p}_cci>[0-9]+):" $${p}_cci;`,
          `  default ${notFoundIndex};`,
          '}',
          `map $${p}_cc_index $${p}_cache_control {`,
          ...ccLines,
          `  default ${str(options.notFound.cacheControl)};`,
          '}',
          `map $${p}_answer $${p}_page {`,
          `  "~^[0-9]+:[0-9]+:(?<${p}_pg>[a-z_]+)$" $${p}_pg;`,
          '  default not_found;',
          '}',
          '',
        ].join('\n'),
        { mode },
      );
      await writeFile(
        join(dir, 'lifeline_http.conf'),
        [
          `# Lifeline static snapshot of ${options.shortBaseUrl}, generated ${options.generatedAt}: the answer every`,
          '# code had at that moment. Include in the http context; regenerate (and `nginx -s reload`) to follow changes.',
          '# Links with routing rules (language, device, country) answer their default target here, for every reader:',
          '# a static file cannot choose; their entries are marked. With several short domains in one http block,',
          '# include the snapshot’s nginx/lifeline_all_http.conf instead (it sets these sizes once for all).',
          `map_hash_max_size ${nginxMapHashMax(count)};`,
          'map_hash_bucket_size 128;',
          `include ${join(served, 'lifeline_maps.conf')};`,
          '',
        ].join('\n'),
        { mode },
      );
      const headers = [
        `  add_header Cache-Control $${p}_cache_control always;`,
        '  add_header X-Robots-Tag noindex always;',
      ];
      const root = options.rootRedirectUrl
        ? `location = / {\n  add_header X-Robots-Tag noindex always;\n  return 302 ${str(options.rootRedirectUrl)};\n}`
        : '';
      await writeFile(
        join(dir, 'lifeline_server.conf'),
        [
          `# Lifeline static snapshot of ${options.shortBaseUrl}, generated ${options.generatedAt}.`,
          `# Include inside a server block (after your listen/ssl lines); needs ${p === DEFAULT_NGINX_PREFIX ? 'lifeline_http.conf' : 'this domain’s lifeline_http.conf (or lifeline_all_http.conf)'} in the http context.`,
          'server_tokens off;',
          'error_page 404 /_lifeline/not_found.html;',
          `error_page 410 /_lifeline/$${p}_page.html;`,
          'error_page 451 /_lifeline/blocked.html;',
          'location = /healthz {',
          '  default_type application/json;',
          '  add_header Cache-Control no-store always;',
          `  return 200 ${str(JSON.stringify({ status: 'static-snapshot', generatedAt: options.generatedAt }))};`,
          '}',
          root,
          'location ^~ /_lifeline/ {',
          '  internal;',
          `  root ${str(join(served, 'pages'))};`,
          '  default_type text/html;',
          '  charset utf-8;',
          '  types { }',
          ...headers,
          '  add_header Referrer-Policy strict-origin-when-cross-origin always;',
          `  add_header Content-Security-Policy ${str(STATIC_PAGE_CSP)} always;`,
          '  add_header X-Content-Type-Options nosniff always;',
          '}',
          'location / {',
          ...headers,
          '  add_header Referrer-Policy strict-origin-when-cross-origin always;',
          ...[301, 302, 303, 307, 308].map(
            (status) => `  if ($${p}_answer ~ "^${status}:[0-9]+:(.*)$") { return ${status} $1; }`,
          ),
          `  if ($${p}_answer ~ "^200:") { rewrite ^ /_lifeline/warn$${p}_key.html last; }`,
          `  if ($${p}_answer ~ "^410:") { return 410; }`,
          `  if ($${p}_answer ~ "^451:") { return 451; }`,
          '  return 404;',
          '}',
          '',
        ].join('\n'),
        { mode },
      );
      await writeFile(
        join(dir, 'nginx.conf'),
        nginxMainConf({
          comment: [
            '# A complete nginx configuration serving this snapshot on its own (Debian: nginx-light):',
            `#   mkdir -p PREFIX/logs && nginx -p PREFIX -e stderr -c ${join(served, 'nginx.conf')}`,
            '# PREFIX (any writable directory) holds the pid file, logs and temp files.',
          ],
          http: join(served, 'lifeline_http.conf'),
          servers: [
            {
              listen: options.listen,
              serverName: options.serverName,
              server: join(served, 'lifeline_server.conf'),
            },
          ],
        }),
        { mode },
      );
      return {
        files: [
          'nginx/nginx.conf',
          'nginx/lifeline_http.conf',
          'nginx/lifeline_maps.conf',
          'nginx/lifeline_server.conf',
          'nginx/lifeline_map_entries.conf',
        ],
        entries: count,
        skipped,
      };
    },
    abort() {
      entries.abort();
    },
  };
}

/** A complete nginx.conf: one http block including `http`, one server per entry including its server file. */
function nginxMainConf(input: {
  comment: string[];
  http: string;
  servers: { listen: string; serverName: string; server: string }[];
}): string {
  return [
    ...input.comment,
    'worker_processes 1;',
    'pid nginx.pid;',
    'error_log logs/error.log warn;',
    'events { worker_connections 1024; }',
    'http {',
    '  access_log off;',
    '  client_body_temp_path client_body_temp;',
    '  proxy_temp_path proxy_temp;',
    '  fastcgi_temp_path fastcgi_temp;',
    '  uwsgi_temp_path uwsgi_temp;',
    '  scgi_temp_path scgi_temp;',
    `  include ${input.http};`,
    ...input.servers.flatMap((s) => [
      '  server {',
      `    listen ${s.listen};`,
      `    server_name ${s.serverName};`,
      `    include ${s.server};`,
      '  }',
    ]),
    '}',
    '',
  ].join('\n');
}

/** One short domain's nginx files, as writeNginxAllDomains needs them. */
export interface NginxDomainFiles {
  /** The domain's served folder (its `nginx/` subfolder holds the files). */
  publicDir: string;
  serverName: string;
  /** Codes in its map. */
  entries: number;
}

/**
 * Every short domain in one nginx `http` block: `nginx/lifeline_all_http.conf` (the map hash sizes once, for the
 * largest domain's map, then each domain's `lifeline_maps.conf`: their variables have distinct prefixes) and
 * `nginx/nginx_all.conf`, a complete configuration with one `server` per domain, chosen by `server_name`; the
 * first (the default short domain) is also the `default_server`, as Lifeline answers an unknown Host with the
 * default domain's answers unless told otherwise. Returns the files written, relative to `outDir`.
 */
export async function writeNginxAllDomains(input: {
  outDir: string;
  publicDir: string;
  listen: string;
  generatedAt: string;
  /** The default short domain first. */
  domains: NginxDomainFiles[];
  /** SHORT_DOMAIN_UNKNOWN_HOST=not_found: an unknown Host gets a 404 for every path, as Lifeline answers it. */
  unknownHostNotFound?: boolean;
}): Promise<string[]> {
  const dir = join(input.outDir, 'nginx');
  const served = join(input.publicDir, 'nginx');
  const mode = SNAPSHOT_FILE_MODE;
  const largest = Math.max(0, ...input.domains.map((d) => d.entries));
  await writeFile(
    join(dir, 'lifeline_all_http.conf'),
    [
      `# Lifeline static snapshot of every short domain, generated ${input.generatedAt}: include in the http context`,
      '# (instead of any one domain’s lifeline_http.conf), with one server per domain including its lifeline_server.conf.',
      `map_hash_max_size ${nginxMapHashMax(largest)};`,
      'map_hash_bucket_size 128;',
      ...input.domains.map((d) => `include ${join(d.publicDir, 'nginx', 'lifeline_maps.conf')};`),
      '',
    ].join('\n'),
    { mode },
  );
  const listenDefault = `${input.listen} default_server`;
  const servers = input.domains.map((d, i) => ({
    listen: i === 0 && !input.unknownHostNotFound ? listenDefault : input.listen,
    serverName: d.serverName,
    server: join(d.publicDir, 'nginx', 'lifeline_server.conf'),
  }));
  const conf = nginxMainConf({
    comment: [
      '# A complete nginx configuration serving every short domain of this snapshot, one server each (nginx-light):',
      `#   mkdir -p PREFIX/logs && nginx -p PREFIX -e stderr -c ${join(served, 'nginx_all.conf')}`,
    ],
    http: join(served, 'lifeline_all_http.conf'),
    servers,
  });
  const unknown = input.unknownHostNotFound
    ? [
        '  server {',
        `    listen ${listenDefault};`,
        '    server_name _;',
        '    server_tokens off;',
        '    add_header X-Robots-Tag noindex always;',
        '    return 404;',
        '  }',
      ]
    : [];
  await writeFile(join(dir, 'nginx_all.conf'), conf.replace(/\}\n$/, `${[...unknown, '}'].join('\n')}\n`), {
    mode,
  });
  return ['nginx/lifeline_all_http.conf', 'nginx/nginx_all.conf'];
}
