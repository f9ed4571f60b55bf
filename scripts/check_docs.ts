// `npm run lint:docs`: the repository speaks for itself. Three checks over every tracked text file:
//   1. no tracker or work-log words (issue, session or ticket and a number) in code, docs, test names or migration names: a reader
//      of the repository cannot follow them; say why, or cite an ADR;
//   2. every `*.md` path cited in code and docs names a file that exists in the repository;
//   3. every link to a heading (a markdown path with an anchor, a bare `#anchor`, the alert rules' `runbook_url`)
//      names a heading that exists.
// Exits 1 with one line per finding (file:line: what).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';

const ROOT = join(import.meta.dirname, '..');

/** Migrations already applied on deployments keep their names: node-pg-migrate records each by name. */
const APPLIED_MIGRATION_NAMES = new Set([
  'migrations/0005_issue5_links_updated_idx.sql',
  'migrations/0006_issue6_lifecycle.sql',
  'migrations/0008_issue4_click_batches.sql',
]);

/** Recorded workflow histories and lockfiles are machine-written; this check's own test plants findings on purpose. */
const SKIPPED = [
  /^package-lock\.json$/,
  /^tests\/histories\//,
  /^tests\/scripts\/check_docs\.test\.ts$/,
  /\.(png|jpg|ico|svg|woff2?|pdf)$/,
];

const TRACKER_WORDS = /\b(?:issues?|sessions?|tickets?)[ _-]?#?\d+\b/i;
const MD_PATH = /(?<![\w/.-])((?:\.{1,2}\/)?[\w./-]*[\w-]\.md)(#[\w\u00C0-\uFFFF-]+)?(?![\w])/g;

export interface Finding {
  file: string;
  line: number;
  what: string;
}

function listFiles(root: string): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter((f) => f !== '' && existsSync(join(root, f)) && !SKIPPED.some((re) => re.test(f)));
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m?.[1]) continue;
    const text = m[1].replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const m of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) if (m[1]) anchors.add(m[1]);
  return anchors;
}

function resolveMd(root: string, file: string, cited: string, byName: Map<string, string[]>): string | null {
  const candidates = [
    normalize(join(dirname(file), cited)),
    normalize(cited),
    normalize(join('docs', cited)),
  ];
  for (const c of candidates) if (!c.startsWith('..') && existsSync(join(root, c))) return c;
  if (!cited.includes('/')) {
    const same = byName.get(cited);
    if (same?.length === 1 && same[0]) return same[0];
  }
  return null;
}

/** Every finding in the repository at `root` (its tracked and untracked, not ignored, files). */
export function checkRepository(root = ROOT, files = listFiles(root)): Finding[] {
  const findings: Finding[] = [];
  const byName = new Map<string, string[]>();
  for (const f of files)
    if (f.endsWith('.md')) byName.set(basename(f), [...(byName.get(basename(f)) ?? []), f]);
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOf = (f: string) => {
    const cached = anchorCache.get(f);
    if (cached) return cached;
    const anchors = headingAnchors(readFileSync(join(root, f), 'utf8'));
    anchorCache.set(f, anchors);
    return anchors;
  };

  for (const file of files) {
    if (TRACKER_WORDS.test(file) && !APPLIED_MIGRATION_NAMES.has(file))
      findings.push({ file, line: 0, what: 'a tracker word in the file name' });
    const text = readFileSync(join(root, file), 'utf8');
    if (text.includes('\u0000')) continue;
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      const tracker = TRACKER_WORDS.exec(line);
      if (tracker) findings.push({ file, line: i + 1, what: `tracker word "${tracker[0]}"` });
      for (const m of line.matchAll(MD_PATH)) {
        const [, cited = '', anchor] = m;
        const before = line.slice(0, m.index);
        if (/https?:\/\/\S*$/.test(before) || /[\w-]+\/[\w.-]+#?$/.test(before)) continue;
        const target = resolveMd(root, file, cited, byName);
        if (!target) {
          findings.push({ file, line: i + 1, what: `cites ${cited}, which is not in the repository` });
          continue;
        }
        if (anchor && !anchorsOf(target).has(anchor.slice(1)))
          findings.push({ file, line: i + 1, what: `${cited}${anchor}: no such heading in ${target}` });
      }
      if (file.endsWith('.md'))
        for (const m of line.matchAll(/\]\((#[^)\s]+)\)/g)) {
          const anchor = m[1] ?? '';
          if (!anchorsOf(file).has(decodeURIComponent(anchor.slice(1))))
            findings.push({ file, line: i + 1, what: `${anchor}: no such heading in this file` });
        }
    });
  }
  return findings;
}

if (import.meta.main || process.argv[1] === import.meta.filename) {
  const findings = checkRepository();
  for (const f of findings) process.stderr.write(`${f.file}:${f.line}: ${f.what}\n`);
  if (findings.length > 0) {
    process.stderr.write(`lint:docs: ${findings.length} finding(s)\n`);
    process.exit(1);
  }
}
