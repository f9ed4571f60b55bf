import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';

// Layout breakage, judged from the boxes the browser laid out (not from pixels): run in the page by
// checkLayout(). Kept as source text: tsx would wrap named functions with a helper the page lacks.
const PROBE = String.raw`(({ dir, lang, ltrWords }) => {
  const problems = [];
  const vw = document.documentElement.clientWidth;
  const describe = (el) => {
    const text = (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 50);
    return el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') + (text ? ' "' + text + '"' : '');
  };
  const root = document.documentElement;
  if (root.getAttribute('dir') !== dir) problems.push('html dir is ' + root.getAttribute('dir') + ', not ' + dir);
  if (root.getAttribute('lang') !== lang) problems.push('html lang is ' + root.getAttribute('lang') + ', not ' + lang);
  if (root.scrollWidth > vw + 1) problems.push('the page scrolls sideways: ' + root.scrollWidth + ' px wide in a ' + vw + ' px window');

  const SKIP_TAGS = new Set(['SCRIPT', 'STYLE', 'TITLE', 'DESC', 'OPTION', 'SELECT', 'TEXTAREA', 'NOSCRIPT', 'TEMPLATE']);
  const styles = new Map();
  const style = (el) => {
    let s = styles.get(el);
    if (!s) { s = getComputedStyle(el); styles.set(el, s); }
    return s;
  };
  const isHidden = (el) => {
    for (let e = el; e; e = e.parentElement) {
      if (SKIP_TAGS.has(e.tagName)) return true;
      if (e.classList && e.classList.contains('visually-hidden')) return true;
      // The content of a closed <details> is not rendered, though its styles say otherwise.
      const p = e.parentElement;
      if (p && p.tagName === 'DETAILS' && !p.open && e.tagName !== 'SUMMARY') return true;
      const s = style(e);
      if (s.display === 'none' || s.visibility === 'hidden') return true;
      // Screen-reader-only boxes (the phone layout's table headers): clipped to nothing on purpose.
      if (s.clipPath === 'inset(50%)') return true;
    }
    return false;
  };
  // The box a piece of text must stay inside: its nearest block-level (or flex/grid/table) ancestor.
  const containerOf = (el) => {
    let e = el;
    while (e && e.parentElement) {
      const d = style(e).display;
      if (!d.startsWith('inline') && d !== 'contents') return e;
      if (e.tagName === 'svg') return e;
      e = e.parentElement;
    }
    return e;
  };
  // Text deliberately cut with an ellipsis (or scrolled inside a box) is not an overflow.
  const clippedBy = (el) => {
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const s = style(e);
      if (s.overflowX !== 'visible' || s.overflowY !== 'visible') return e;
    }
    return null;
  };

  // What a person sees of a box: clipped by every ancestor that hides its overflow.
  const visiblePart = (r, el) => {
    let v = { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const s = style(e);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const c = e.getBoundingClientRect();
      v = { left: Math.max(v.left, c.left), right: Math.min(v.right, c.right), top: Math.max(v.top, c.top), bottom: Math.min(v.bottom, c.bottom) };
    }
    return v.right - v.left > 0.5 && v.bottom - v.top > 0.5 ? v : null;
  };
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement;
    if (!el || isHidden(el)) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const raw = [...range.getClientRects()].filter((r) => r.width > 0.5 && r.height > 0.5);
    if (raw.length === 0) continue;
    const seen = raw.map((r) => visiblePart(r, el)).filter(Boolean);
    texts.push({ node: n, el, rects: raw, seen });
  }

  // 1. No text leaves its container (unless the container clips it on purpose).
  for (const t of texts) {
    const box = containerOf(t.el);
    if (!box) continue;
    const b = box.getBoundingClientRect();
    const clip = clippedBy(t.el);
    for (const r of t.rects) {
      const outside = r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 2 || r.bottom > b.bottom + 2;
      if (!outside) continue;
      if (clip && (clip === box || clip.contains(box) || box.contains(clip))) continue;
      problems.push('text overflows its box: ' + describe(t.el) + ' [' + Math.round(r.left) + '..' + Math.round(r.right) + ' x ' + Math.round(r.top) + '..' + Math.round(r.bottom) + '] outside ' + describe(box) + ' [' + Math.round(b.left) + '..' + Math.round(b.right) + ' x ' + Math.round(b.top) + '..' + Math.round(b.bottom) + ']');
      break;
    }
  }

  // 1b. Text cut short keeps its beginning: the first letter is visible (a clip on the wrong side of a
  //     left-to-right email or URL on a right-to-left page would hide it).
  for (const t of texts) {
    const first = document.createRange();
    const offset = t.node.textContent.search(/\S/);
    first.setStart(t.node, offset);
    first.setEnd(t.node, offset + 1);
    const r = first.getBoundingClientRect();
    if (r.width < 0.5) continue;
    const v = visiblePart(r, t.el);
    if (!v || v.right - v.left < Math.min(r.width, 2) - 0.5) problems.push('text loses its beginning to a clip: ' + describe(t.el));
  }

  // 2. Nothing overlaps: no two lines of text, no text over a control it is not part of, no two controls.
  const intersect = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2;
  const lines = texts.flatMap((t) => t.seen.map((r) => ({ t, r })));
  for (let i = 0; i < lines.length && problems.length < 40; i++) {
    for (let j = i + 1; j < lines.length; j++) {
      const a = lines[i], b = lines[j];
      if (a.t === b.t) continue;
      if (!intersect(a.r, b.r)) continue;
      problems.push('text overlaps text: ' + describe(a.t.el) + ' and ' + describe(b.t.el));
    }
  }
  const controls = [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button, a.btn, img, summary.btn')].filter((c) => !isHidden(c) && c.getBoundingClientRect().width > 0);
  for (const c of controls) {
    const cr = c.getBoundingClientRect();
    for (const t of texts) {
      if (c.contains(t.node) || t.el.contains(c)) continue;
      // A label's own text beside its checkbox is laid out next to it; overlap would still be caught below.
      if (t.seen.some((r) => intersect(r, cr))) problems.push('text overlaps a control: ' + describe(t.el) + ' over ' + describe(c));
    }
    for (const d of controls) {
      if (d === c || c.contains(d) || d.contains(c)) continue;
      if (controls.indexOf(d) < controls.indexOf(c)) continue;
      if (intersect(cr, d.getBoundingClientRect())) problems.push('controls overlap: ' + describe(c) + ' and ' + describe(d));
    }
  }

  // 3. The main navigation sits at the inline-start side, its items in reading order.
  const nav = document.querySelector('header nav');
  if (nav) {
    const n = nav.getBoundingClientRect();
    const items = [...nav.querySelectorAll('a')].map((a) => a.getBoundingClientRect());
    const brand = document.querySelector('header .brand');
    if (dir === 'rtl') {
      if (!(n.right > vw / 2)) problems.push('navigation not at the right (inline-start) side: right edge ' + Math.round(n.right) + ' of ' + vw);
      if (items.length > 1 && !(items[0].right > items[items.length - 1].right)) problems.push('navigation items not in right-to-left order');
      if (brand && !(brand.getBoundingClientRect().left >= n.left - 1)) problems.push('brand is not at the start of the navigation row');
    } else {
      if (!(n.left < vw / 2)) problems.push('navigation not at the left (inline-start) side: left edge ' + Math.round(n.left) + ' of ' + vw);
      if (items.length > 1 && !(items[0].left < items[items.length - 1].left)) problems.push('navigation items not in left-to-right order');
      if (brand && !(brand.getBoundingClientRect().right <= n.right + 1)) problems.push('brand is not at the start of the navigation row');
    }
  }

  // 4. Nothing scrolls sideways inside the page on a wide window (tables fit their cards).
  if (vw >= 1000) {
    for (const el of document.querySelectorAll('.table-card, .table-scroll')) {
      if (el.scrollWidth > el.clientWidth + 1) problems.push('a table scrolls sideways in ' + describe(el));
    }
  }

  // 5. In a right-to-left language, no English left behind: text outside data (isolated arguments, elements
  //    marked dir=ltr or dir=auto, code) with Latin words that are not names the UI keeps as they are.
  const latin = [];
  if (dir === 'rtl') {
    const allowed = new Set(ltrWords);
    for (const t of texts) {
      if (t.el.closest('[dir=ltr], [dir=auto], code, .mono, .url, .code-link, .code-host, .tag, svg text.axis-label')) continue;
      const text = t.node.textContent.replace(/\u2068[^\u2069]*\u2069/g, ' ');
      for (const word of text.match(/[A-Za-z][A-Za-z_]+/g) || []) {
        if (!allowed.has(word)) latin.push(word + ' in ' + describe(t.el));
      }
    }
  }
  return { problems, latin, texts: texts.length };
})`;

/** Names and words the Arabic UI keeps in Latin letters (products, configuration, protocols, formats). */
export const LTR_WORDS = [
  'Lifeline',
  // Authenticator apps the two-step set-up names: Google Authenticator, Microsoft Authenticator, 1Password.
  'Google',
  'Microsoft',
  'Authenticator',
  'Password',
  'Bitly',
  'WordPress',
  'Temporal',
  'UI',
  'OpenAPI',
  'DNS',
  'BITLY_TOKEN',
  'TEMPORAL_UI_URL',
  'ALLOWED_TARGET_HOSTS',
  'QR',
  'SVG',
  'PNG',
  'http',
  'https',
  'Gone',
  'UTC',
  'ISO',
  'Unicode',
  'site',
  'postId',
  'JSON',
  'SHA',
  'CSV',
  'RE2',
  'nginx',
  'ESCROW_INTERVAL',
  'SNAPSHOT_INTERVAL',
  'SNAPSHOT_DIR',
  // Analytics: the UTM parameters' family name, GA4 (matched as "GA"), and the HTTP method HEAD.
  'UTM',
  'GA',
  'HEAD',
  // The domain watch: the registries' protocol, DNSSEC, and Google's service by its name.
  'RDAP',
  'DNSSEC',
  'Safe',
  'Browsing',
  // The destination checks' card: the protocols by their names (an HTTP status, the TLS of the last hop).
  'HTTP',
  'TLS',
  // Outgoing webhooks: the signing specification's name and the settings the page names.
  'Standard',
  'Webhooks',
  'OUTGOING_ALLOWED_PRIVATE',
  'WEBHOOK_SECRET_GRACE',
  // Print QR codes and imports: the PDF format, file-size units, the CDN in front of the short domain, UTF-8.
  'PDF',
  'UTF',
  'MiB',
  'KiB',
  'CDN',
];

/** Runs the layout checks on the page as it is now; fails the test with every problem found. */
export async function checkLayout(page: Page, name: string, expect: { dir: 'ltr' | 'rtl'; lang: string }) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const result = (await page.evaluate(`${PROBE}(${JSON.stringify({ ...expect, ltrWords: LTR_WORDS })})`)) as {
    problems: string[];
    latin: string[];
    texts: number;
  };
  assert.ok(result.texts > 2, `${name}: the page shows text`);
  assert.deepEqual(result.problems, [], `${name}: layout problems`);
  assert.deepEqual(result.latin, [], `${name}: English words left in the ${expect.lang} page`);
}
