// Seeding and inspection of the Bitly fake's bitlinks for tests: links made outside Lifeline, clicks, copies.
import type { BitlinkStore } from './bitlink_store.ts';
import type { FakeBitlink } from './types.ts';

/** A link as if made in Bitly's UI: a hash, plus `keyword` if given. */
export interface SeedBitlink {
  longUrl: string;
  keyword?: string;
  domain?: string;
  group?: string;
  archived?: boolean;
  title?: string;
  tags?: string[];
  clicks?: number;
  createdAt?: Date;
  /**
   * Its hash (the id is `domain/hash`) instead of a random one: an archive's bitlinks under the ids Postgres
   * already records for them (bench/reconcile_scale.ts). Refused when taken.
   */
  hash?: string;
}

/** The defaults a seeded link takes: our group, and the first of our domains. */
export interface SeedDefaults {
  groupGuid: string;
  domain: string;
}

/** A copy a test may keep or change without touching the fake's state. */
function copyOf(link: FakeBitlink): FakeBitlink {
  return {
    ...link,
    keywords: [...link.keywords],
    tags: [...link.tags],
    dailyClicks: { ...link.dailyClicks },
  };
}

export function seedBitlink(store: BitlinkStore, defaults: SeedDefaults, link: SeedBitlink): FakeBitlink {
  const domain = (link.domain ?? defaults.domain).toLowerCase();
  if (link.keyword && store.hasKeyword(domain, link.keyword)) {
    throw new Error(`keyword ${domain}/${link.keyword} is already taken`);
  }
  const made = store.insert({
    domain,
    longUrl: link.longUrl,
    group: link.group ?? defaults.groupGuid,
    title: link.title ?? null,
    tags: link.tags ?? [],
    ...(link.createdAt ? { createdAt: link.createdAt } : {}),
    ...(link.hash !== undefined ? { hash: link.hash } : {}),
  });
  made.archived = link.archived ?? false;
  made.clicks = link.clicks ?? 0;
  if (link.keyword) store.addKeyword(made, link.keyword);
  return { ...made, keywords: [...made.keywords], dailyClicks: { ...made.dailyClicks } };
}

/** A link by id, or by a keyword on `firstDomain`; throws when there is none. */
function mustFind(store: BitlinkStore, firstDomain: string, idOrKeyword: string): FakeBitlink {
  const link = store.lookup(idOrKeyword) ?? store.lookup(`${firstDomain}/${idOrKeyword}`);
  if (!link) throw new Error(`no bitlink ${idOrKeyword}`);
  return link;
}

export function seedDailyClicks(
  store: BitlinkStore,
  firstDomain: string,
  idOrKeyword: string,
  perDay: Record<string, number>,
): void {
  const link = mustFind(store, firstDomain, idOrKeyword);
  for (const [day, clicks] of Object.entries(perDay)) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`);
    link.dailyClicks[day] = (link.dailyClicks[day] ?? 0) + clicks;
  }
}

export function setClicks(
  store: BitlinkStore,
  firstDomain: string,
  idOrKeyword: string,
  clicks: number,
): void {
  mustFind(store, firstDomain, idOrKeyword).clicks = clicks;
}

/** Copies of the links of `group` (or every group's), oldest first. */
export function listLinks(store: BitlinkStore, group: string | 'all'): FakeBitlink[] {
  return store
    .all()
    .filter((l) => group === 'all' || l.group === group)
    .sort((a, b) => a.seq - b.seq)
    .map(copyOf);
}

/** A copy of the link `keyword` on `domain` reaches, or null. */
export function linkByKeyword(store: BitlinkStore, keyword: string, domain: string): FakeBitlink | null {
  const id = store.keywordOwner(`${domain.toLowerCase()}/${keyword}`);
  const link = id ? store.byId(id) : undefined;
  return link ? copyOf(link) : null;
}
