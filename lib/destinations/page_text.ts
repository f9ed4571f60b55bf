// What a check reads of a page: its title, and whether two pages are the same page (the soft-404 test compares
// the destination with a request for a random sibling path on the same site).

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const point =
        name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isFinite(point) && point > 0 && point < 0x110000 ? String.fromCodePoint(point) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** The page's <title>, whitespace folded, at most 300 characters; null when there is none. */
export function extractTitle(html: string): string | null {
  const match = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  if (!match) return null;
  const title = decodeEntities(match[1]!.replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
  return title === '' ? null : [...title].slice(0, 300).join('');
}

/** The words of a page's text (tags, scripts and styles dropped), without the given tokens. */
function wordsOf(html: string, drop: readonly string[]): Set<string> {
  let text = html
    .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .toLowerCase();
  for (const token of drop) if (token) text = text.split(token.toLowerCase()).join(' ');
  return new Set(text.match(/[\p{L}\p{N}]{2,}/gu) ?? []);
}

/**
 * Whether two pages are the same page with a different path in it: nine words in ten shared, or the same
 * non-empty title and half the words (a site whose pages all share one title is not enough on its own). `drop`: the path segments that differ (a not-found page often repeats the path it was asked for).
 */
export function isSamePage(a: string, b: string, drop: readonly string[] = []): boolean {
  const strip = (html: string) => {
    const title = extractTitle(html);
    return title ? drop.reduce((t, token) => (token ? t.split(token).join('') : t), title).trim() : null;
  };
  const titleA = strip(a);
  const titleB = strip(b);
  const sameTitle = titleA !== null && titleA === titleB;
  const wordsA = wordsOf(a, drop);
  const wordsB = wordsOf(b, drop);
  if (wordsA.size === 0 && wordsB.size === 0) return a.trim() === b.trim();
  let shared = 0;
  for (const w of wordsA) if (wordsB.has(w)) shared++;
  const similarity = shared / (wordsA.size + wordsB.size - shared);
  return similarity >= 0.9 || (sameTitle && similarity >= 0.5);
}
