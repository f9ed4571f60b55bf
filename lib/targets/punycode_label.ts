// Whether an `xn--` host label is valid punycode: canonical_url.ts refuses hosts with one that is not.

/**
 * True when an `xn--` label is the punycode of a name that needs it (has non-ASCII) and that IDNA maps back
 * to exactly this label. Some WHATWG implementations accept any `xn--` string, others refuse: refusing the
 * invalid ones keeps the verdict the same on every runtime.
 */
export function isValidPunycodeLabel(label: string): boolean {
  const decoded = decodePunycode(label.slice(4));
  if (decoded === null || !/[\u0080-\uffff]/.test(decoded)) return false;
  try {
    return new URL(`http://${decoded}/`).hostname === label;
  } catch {
    return false;
  }
}

/** RFC 3492 (Punycode) decoding of one label without its `xn--` prefix, or null when malformed. */
function decodePunycode(input: string): string | null {
  const base = 36;
  const tMin = 1;
  const tMax = 26;
  const delimiter = input.lastIndexOf('-');
  const output: number[] = [];
  for (let j = 0; j < Math.max(delimiter, 0); j++) {
    const c = input.charCodeAt(j);
    if (c >= 0x80) return null;
    output.push(c);
  }
  let n = 128;
  let i = 0;
  let bias = 72;
  for (let at = delimiter > 0 ? delimiter + 1 : 0; at < input.length; ) {
    const oldI = i;
    let weight = 1;
    for (let k = base; ; k += base) {
      if (at >= input.length) return null;
      const c = input.charCodeAt(at++);
      const digit =
        c >= 48 && c <= 57 ? c - 22 : c >= 97 && c <= 122 ? c - 97 : c >= 65 && c <= 90 ? c - 65 : -1;
      if (digit < 0) return null;
      i += digit * weight;
      if (i > 0x10ffff * 64) return null; // far past any code point: overflow guard
      const threshold = k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias;
      if (digit < threshold) break;
      weight *= base - threshold;
    }
    const points = output.length + 1;
    bias = adaptBias(i - oldI, points, oldI === 0);
    n += Math.floor(i / points);
    i %= points;
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return null;
    output.splice(i, 0, n);
    i++;
  }
  return String.fromCodePoint(...output);
}

function adaptBias(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / 700) : delta >> 1;
  d += Math.floor(d / points);
  let k = 0;
  while (d > ((36 - 1) * 26) >> 1) {
    d = Math.floor(d / (36 - 1));
    k += 36;
  }
  return k + Math.floor(((36 - 1 + 1) * d) / (d + 38));
}
