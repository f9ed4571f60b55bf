// Bitly's answer shapes: the error envelope, timestamps, and the Bitlink and CustomBitlink bodies.
import type { FakeBitlink } from './types.ts';

export const BITLY_DEFAULT_DOMAIN = 'bit.ly';
export const KEYWORD = /^[A-Za-z0-9_-]+$/;

/** Bitly's timestamp style: `2020-01-02T23:51:47+0000`. */
export function bitlyTime(date = new Date()): string {
  return `${date.toISOString().slice(0, 19)}+0000`;
}

export class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

export function bitlyError(
  status: number,
  message: string,
  description: string,
  extra: object = {},
): HttpAnswer {
  return new HttpAnswer(status, { message, resource: 'bitlinks', description, ...extra });
}

export function notFound(): HttpAnswer {
  return bitlyError(404, 'NOT_FOUND', 'What you are looking for cannot be found.');
}

export function forbidden(): HttpAnswer {
  return bitlyError(403, 'FORBIDDEN', 'You are currently forbidden to access this resource.');
}

/** A Bitlink body (OpenAPI schema `BitlinkBody`); `baseUrl` is the fake's, for the group reference. */
export function bitlinkBody(baseUrl: string, link: FakeBitlink) {
  return {
    references: { group: `${baseUrl}/v4/groups/${link.group}` },
    link: `https://${link.id}`,
    id: link.id,
    long_url: link.longUrl,
    title: link.title,
    archived: link.archived,
    created_at: link.createdAt,
    created_by: 'lifeline-fake',
    client_id: 'fake-client',
    custom_bitlinks: link.keywords.map((k) => `https://${link.domain}/${k}`),
    tags: link.tags,
    launchpad_ids: [],
    deeplinks: [],
  };
}

/** A CustomBitlink body: the keyword on `domain`, the bitlink it reaches, and its one-entry history. */
export function customBitlinkBody(baseUrl: string, domain: string, keyword: string, link: FakeBitlink) {
  return {
    custom_bitlink: `https://${domain}/${keyword}`,
    bitlink: bitlinkBody(baseUrl, link),
    bitlink_history: [
      {
        hash: link.hash,
        keyword,
        created: link.createdAt,
        group_guid: link.group,
        is_active: true,
        long_url: link.longUrl,
        bsd: domain,
        login: 'lifeline-fake',
      },
    ],
  };
}
