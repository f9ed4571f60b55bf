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
}

export class BitlinkStore {
  private readonly links = new Map<string, FakeBitlink>();
  /** `domain/keyword` → bitlink id. */
  private readonly keywordIndex = new Map<string, string>();
  private seq = 0;

  clear(): void {
    this.links.clear();
    this.keywordIndex.clear();
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

  insert(input: NewBitlink): FakeBitlink {
    const hash = this.newHash(input.domain);
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
