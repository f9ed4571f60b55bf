// The bitlinks the Bitly fake holds: by id, keyword overrides unique per (domain, keyword), creation order.
import { randomBytes } from 'node:crypto';
import { bitlyTime } from './answers.ts';
import type { FakeBitlink } from './types.ts';

export interface NewBitlink {
  domain: string;
  longUrl: string;
  group: string;
  title: string | null;
  tags: string[];
  createdAt?: Date;
  /** The hash to use (its id is then `domain/hash`); a fresh random one when absent. */
  hash?: string;
}

export class BitlinkStore {
  private readonly links = new Map<string, FakeBitlink>();
  /** `domain/keyword` → bitlink id. */
  private readonly keywordIndex = new Map<string, string>();
  /** Every bitlink in creation order (ascending `seq`): a group's page found without sorting them all. */
  private readonly ordered: FakeBitlink[] = [];
  /** Bitlinks per group. */
  private readonly groupSizes = new Map<string, number>();
  private seq = 0;

  clear(): void {
    this.links.clear();
    this.keywordIndex.clear();
    this.ordered.length = 0;
    this.groupSizes.clear();
  }

  /** Every bitlink, in insertion order (live objects: handlers change them in place). */
  all(): FakeBitlink[] {
    return [...this.links.values()];
  }

  byId(id: string): FakeBitlink | undefined {
    return this.links.get(id);
  }

  /** A bitlink by `domain/hash` or by `domain/keyword`. */
  lookup(id: string): FakeBitlink | undefined {
    const direct = this.links.get(id);
    if (direct) return direct;
    const viaKeyword = this.keywordIndex.get(id);
    return viaKeyword ? this.links.get(viaKeyword) : undefined;
  }

  /** The id of the bitlink `domain/keyword` (lower-case domain) reaches, if the keyword is taken. */
  keywordOwner(domainKeyword: string): string | undefined {
    return this.keywordIndex.get(domainKeyword);
  }

  hasKeyword(domain: string, keyword: string): boolean {
    return this.keywordIndex.has(`${domain}/${keyword}`);
  }

  /** A fresh random back-half, free both as a hash and as a keyword on `domain`. */
  newHash(domain: string): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    for (;;) {
      let hash = '';
      for (const b of randomBytes(7)) hash += alphabet[b % alphabet.length];
      if (!this.links.has(`${domain}/${hash}`) && !this.keywordIndex.has(`${domain}/${hash}`)) return hash;
    }
  }

  /** How many bitlinks there are (of every group). */
  get size(): number {
    return this.ordered.length;
  }

  /** How many bitlinks `group` holds. */
  groupSize(group: string): number {
    return this.groupSizes.get(group) ?? 0;
  }

  /**
   * The `count` bitlinks after the `skip` newest (every group's; live objects), newest first: a page when every
   * bitlink is of one group, read in O(count) however many there are.
   */
  newestAfter(skip: number, count: number): FakeBitlink[] {
    const page: FakeBitlink[] = [];
    for (let i = this.ordered.length - 1 - skip; i >= 0 && page.length < count; i--)
      page.push(this.ordered[i]!);
    return page;
  }

  /** How many bitlinks have a `seq` of at least `seq` (binary search of the creation order). */
  countFromSeq(seq: number): number {
    let lo = 0;
    let hi = this.ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ordered[mid]!.seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return this.ordered.length - lo;
  }

  insert(input: NewBitlink): FakeBitlink {
    if (
      input.hash !== undefined &&
      (this.links.has(`${input.domain}/${input.hash}`) ||
        this.keywordIndex.has(`${input.domain}/${input.hash}`))
    ) {
      throw new Error(`bitlink ${input.domain}/${input.hash} is already taken`);
    }
    const hash = input.hash ?? this.newHash(input.domain);
    const link: FakeBitlink = {
      id: `${input.domain}/${hash}`,
      domain: input.domain,
      hash,
      keywords: [],
      longUrl: input.longUrl,
      archived: false,
      group: input.group,
      title: input.title,
      tags: input.tags,
      createdAt: bitlyTime(input.createdAt),
      clicks: 0,
      dailyClicks: {},
      seq: ++this.seq,
    };
    this.links.set(link.id, link);
    this.ordered.push(link);
    this.groupSizes.set(link.group, (this.groupSizes.get(link.group) ?? 0) + 1);
    return link;
  }

  addKeyword(link: FakeBitlink, keyword: string): void {
    link.keywords.push(keyword);
    this.keywordIndex.set(`${link.domain}/${keyword}`, link.id);
  }

  /** Points `domain/keyword` (lower-case domain) at `to`, taking it off the bitlink it reached. */
  moveKeyword(domainKeyword: string, keyword: string, to: FakeBitlink): void {
    const from = this.links.get(this.keywordIndex.get(domainKeyword)!)!;
    from.keywords = from.keywords.filter((k) => k !== keyword);
    to.keywords.push(keyword);
    this.keywordIndex.set(domainKeyword, to.id);
  }
}
