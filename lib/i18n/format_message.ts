// A small ICU MessageFormat subset, enough for the editor UI's catalogues:
//   {name}                                    an argument (numbers formatted for the locale)
//   {n, plural, =0 {…} one {# link} other {# links}}   plural by Intl.PluralRules; "#" is the number
//   {kind, select, admin {…} other {…}}       choice by value
// Braces are syntax only (no quoting); apostrophes are plain text.

type Node = string | { arg: string } | { pound: true } | Choice;
interface Choice {
  arg: string;
  kind: 'plural' | 'select';
  options: Map<string, Node[]>;
}

/** A catalogue message that is not well-formed (a bug in the catalogue, caught by its tests). */
export class MessageSyntaxError extends Error {}

const parsed = new Map<string, Node[]>();

/** Parses a message once (cached). */
export function parseMessage(message: string): Node[] {
  let nodes = parsed.get(message);
  if (!nodes) {
    const [result, end] = parseNodes(message, 0, false);
    if (end !== message.length) throw new MessageSyntaxError(`unbalanced "}" in: ${message}`);
    nodes = result;
    parsed.set(message, nodes);
  }
  return nodes;
}

function parseNodes(s: string, at: number, inPlural: boolean): [Node[], number] {
  const nodes: Node[] = [];
  let text = '';
  let i = at;
  const flush = () => {
    if (text) nodes.push(text);
    text = '';
  };
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === '}') break;
    if (ch === '#' && inPlural) {
      flush();
      nodes.push({ pound: true });
      i++;
      continue;
    }
    if (ch !== '{') {
      text += ch;
      i++;
      continue;
    }
    flush();
    const close = readArgument(s, i + 1);
    nodes.push(close.node);
    i = close.end;
  }
  flush();
  return [nodes, i];
}

function readArgument(s: string, at: number): { node: Node; end: number } {
  const head = /^\s*([A-Za-z][\w]*)\s*(?:,\s*(plural|select)\s*,)?\s*/.exec(s.slice(at));
  if (!head) throw new MessageSyntaxError(`bad argument at ${at} in: ${s}`);
  const arg = head[1]!;
  let i = at + head[0].length;
  if (!head[2]) {
    if (s[i] !== '}') throw new MessageSyntaxError(`expected "}" after {${arg} in: ${s}`);
    return { node: { arg }, end: i + 1 };
  }
  const kind = head[2] as 'plural' | 'select';
  const options = new Map<string, Node[]>();
  for (;;) {
    while (/\s/.test(s[i] ?? '')) i++;
    if (s[i] === '}') break;
    const key = /^(=\d+|[A-Za-z][\w-]*)\s*\{/.exec(s.slice(i));
    if (!key) throw new MessageSyntaxError(`bad ${kind} option at ${i} in: ${s}`);
    const [nodes, end] = parseNodes(s, i + key[0].length, kind === 'plural');
    if (s[end] !== '}') throw new MessageSyntaxError(`unclosed ${kind} option in: ${s}`);
    options.set(key[1]!, nodes);
    i = end + 1;
  }
  if (!options.has('other')) throw new MessageSyntaxError(`${kind} without "other" in: ${s}`);
  return { node: { arg, kind, options }, end: i + 1 };
}

/** Argument values: text, numbers (formatted), or anything else (rich parts such as elements) passed through. */
export type MessageValue = string | number | object;

export interface FormatContext {
  plural: Intl.PluralRules;
  number: Intl.NumberFormat;
  /** Wrap text arguments in U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL ISOLATE. */
  isolate?: boolean;
}

/** Formats a parsed message into parts (strings, and non-string argument values as given). */
export function formatParts(
  nodes: Node[],
  values: Record<string, MessageValue>,
  ctx: FormatContext,
  pound?: number,
): (string | object)[] {
  const out: (string | object)[] = [];
  const push = (part: string | object) => {
    if (typeof part === 'string' && typeof out[out.length - 1] === 'string') out[out.length - 1] += part;
    else out.push(part);
  };
  for (const node of nodes) {
    if (typeof node === 'string') push(node);
    else if ('pound' in node) push(pound === undefined ? '#' : ctx.number.format(pound));
    else if ('kind' in node) {
      const value = values[node.arg];
      let branch: Node[] | undefined;
      if (node.kind === 'plural') {
        const n = Number(value);
        branch = node.options.get(`=${n}`) ?? node.options.get(ctx.plural.select(n));
        for (const part of formatParts(branch ?? node.options.get('other')!, values, ctx, n)) push(part);
        continue;
      }
      branch = node.options.get(String(value)) ?? node.options.get('other')!;
      for (const part of formatParts(branch, values, ctx, pound)) push(part);
    } else {
      const value = values[node.arg];
      if (value === undefined) push(`{${node.arg}}`);
      else if (typeof value === 'number') push(ctx.number.format(value));
      else if (typeof value === 'string' && ctx.isolate) push(`\u2068${value}\u2069`);
      else push(value);
    }
  }
  return out;
}

/** The argument names a message uses (for the catalogue tests). */
export function getArgumentNames(message: string): Set<string> {
  const names = new Set<string>();
  const walk = (nodes: Node[]) => {
    for (const node of nodes) {
      if (typeof node === 'string' || 'pound' in node) continue;
      names.add(node.arg);
      if ('kind' in node) for (const branch of node.options.values()) walk(branch);
    }
  };
  walk(parseMessage(message));
  return names;
}

/** The plural option keys each plural argument of a message offers (for the catalogue tests). */
export function getPluralOptions(message: string): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const walk = (nodes: Node[]) => {
    for (const node of nodes) {
      if (typeof node === 'string' || 'pound' in node || !('kind' in node)) continue;
      if (node.kind === 'plural') found.set(node.arg, new Set(node.options.keys()));
      for (const branch of node.options.values()) walk(branch);
    }
  };
  walk(parseMessage(message));
  return found;
}
