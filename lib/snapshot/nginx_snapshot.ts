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
export function toNginxString(value: string): string {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's own ${variable} syntax, written literally
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\$/g, '${lifeline_dollar}')}"`;
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
 * index>:<Location or page>";`) inside the maps of `lifeline_http.conf` (http context), the server-level directives in
 * `lifeline_server.conf`, a complete `nginx.conf` around them, and the pages under `pages/_lifeline/`. Unknown
 * codes answer 404, gone and expired links 410, blocked 451, redirects their status and Location, warn links their
 * interstitial (200, one page per code); every answer carries Lifeline's Cache-Control and `X-Robots-Tag: noindex`.
 */
export async function createNginxWriter(options: SnapshotWriterOptions): Promise<SnapshotWriter> {
  const dir = join(options.outDir, 'nginx');
  const served = join(options.publicDir, 'nginx');
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
    (_, i) => `map $lifeline_key $lifeline_cap${i} { "~^/.{${i}}[A-Z]" 1; default 0; }`,
  );
  let count = 0;
  const skipped: string[] = [];

  return {
    async add(answer: StaticAnswer) {
      const code = requireSnapshotCode(answer.code);
      const rest = answer.location ?? answer.page!;
      // One map entry is one line of printable ASCII (every target that passes the target rule is): anything
      // else, or a value over nginx's limit, cannot be written.
      const value = toNginxString(`${answer.status}:${indexOf(answer.cacheControl)}:${rest}`);
      if (value.length > NGINX_MAX_VALUE || !/^[\x20-\x7e]+$/.test(value)) {
        skipped.push(code);
        return;
      }
      if (answer.routed)
        await entries.write(`# /${code} has routing rules: this is its default target (ADR 0080)\n`);
      await entries.write(`${toNginxString(`/${code} ${toCaseMask(code, maskLength)}`)} ${value};\n`);
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
      const ccLines = [...cacheControls].map(([value, index]) => `  ${index} ${toNginxString(value)};`);
      // A hash big enough for every code (nginx sizes it at start; a bigger maximum only costs start time).
      let hashMax = 1024;
      while (hashMax < count * 2) hashMax *= 2;
      await writeFile(
        join(dir, 'lifeline_http.conf'),
        [
          `# Lifeline static snapshot of ${options.shortBaseUrl}, generated ${options.generatedAt}: the answer every`,
          '# code had at that moment. Include in the http context; regenerate (and `nginx -s reload`) to follow changes.',
          '# Links with routing rules (language, device, country) answer their default target here, for every reader:',
          '# a static file cannot choose; their entries are marked.',
          `map_hash_max_size ${hashMax};`,
          'map_hash_bucket_size 128;',
          'geo $lifeline_dollar { default "$"; }',
          '# The path of the request as sent (before decoding), without its query string.',
          'map $request_uri $lifeline_key {',
          '  "~^(?<lifeline_p>[^?]*)" $lifeline_p;',
          '  default $request_uri;',
          '}',
          '# Which letters are capitals (nginx compares map keys case-insensitively; codes are case-sensitive).',
          ...maskMaps,
          `map $lifeline_key $lifeline_caps { default "${maskMaps.map((_, i) => `$lifeline_cap${i}`).join('')}"; }`,
          'map "$lifeline_key $lifeline_caps" $lifeline_answer {',
          `  default ${toNginxString(`${options.notFound.status}:${notFoundIndex}:not_found`)};`,
          `  include ${join(served, 'lifeline_map_entries.conf')};`,
          '}',
          'map $lifeline_answer $lifeline_cc_index {',
          '  "~^[0-9]+:(?<lifeline_cci>[0-9]+):" $lifeline_cci;',
          `  default ${notFoundIndex};`,
          '}',
          'map $lifeline_cc_index $lifeline_cache_control {',
          ...ccLines,
          `  default ${toNginxString(options.notFound.cacheControl)};`,
          '}',
          'map $lifeline_answer $lifeline_page {',
          '  "~^[0-9]+:[0-9]+:(?<lifeline_pg>[a-z_]+)$" $lifeline_pg;',
          '  default not_found;',
          '}',
          '',
        ].join('\n'),
        { mode },
      );
      const headers = [
        '  add_header Cache-Control $lifeline_cache_control always;',
        '  add_header X-Robots-Tag noindex always;',
      ];
      const root = options.rootRedirectUrl
        ? `location = / {\n  add_header X-Robots-Tag noindex always;\n  return 302 ${toNginxString(options.rootRedirectUrl)};\n}`
        : '';
      await writeFile(
        join(dir, 'lifeline_server.conf'),
        [
          `# Lifeline static snapshot of ${options.shortBaseUrl}, generated ${options.generatedAt}.`,
          '# Include inside a server block (after your listen/ssl lines); needs lifeline_http.conf in the http context.',
          'server_tokens off;',
          'error_page 404 /_lifeline/not_found.html;',
          'error_page 410 /_lifeline/$lifeline_page.html;',
          'error_page 451 /_lifeline/blocked.html;',
          'location = /healthz {',
          '  default_type application/json;',
          '  add_header Cache-Control no-store always;',
          `  return 200 ${toNginxString(JSON.stringify({ status: 'static-snapshot', generatedAt: options.generatedAt }))};`,
          '}',
          root,
          'location ^~ /_lifeline/ {',
          '  internal;',
          `  root ${toNginxString(join(served, 'pages'))};`,
          '  default_type text/html;',
          '  charset utf-8;',
          '  types { }',
          ...headers,
          '  add_header Referrer-Policy strict-origin-when-cross-origin always;',
          `  add_header Content-Security-Policy ${toNginxString(STATIC_PAGE_CSP)} always;`,
          '  add_header X-Content-Type-Options nosniff always;',
          '}',
          'location / {',
          ...headers,
          '  add_header Referrer-Policy strict-origin-when-cross-origin always;',
          ...[301, 302, 303, 307, 308].map(
            (status) => `  if ($lifeline_answer ~ "^${status}:[0-9]+:(.*)$") { return ${status} $1; }`,
          ),
          '  if ($lifeline_answer ~ "^200:") { rewrite ^ /_lifeline/warn$lifeline_key.html last; }',
          '  if ($lifeline_answer ~ "^410:") { return 410; }',
          '  if ($lifeline_answer ~ "^451:") { return 451; }',
          '  return 404;',
          '}',
          '',
        ].join('\n'),
        { mode },
      );
      await writeFile(
        join(dir, 'nginx.conf'),
        [
          '# A complete nginx configuration serving this snapshot on its own (Debian: nginx-light):',
          `#   mkdir -p PREFIX/logs && nginx -p PREFIX -e stderr -c ${join(served, 'nginx.conf')}`,
          '# PREFIX (any writable directory) holds the pid file, logs and temp files.',
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
          `  include ${join(served, 'lifeline_http.conf')};`,
          '  server {',
          `    listen ${options.listen};`,
          `    server_name ${options.serverName};`,
          `    include ${join(served, 'lifeline_server.conf')};`,
          '  }',
          '}',
          '',
        ].join('\n'),
        { mode },
      );
      return {
        files: [
          'nginx/nginx.conf',
          'nginx/lifeline_http.conf',
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
