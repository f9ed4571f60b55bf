import { isbot } from 'isbot';
import { LRUCache } from 'lru-cache';
import type { ClickKind } from '../stores/click_stats_store.ts';
import { type AgentFamilies, agentFamilies, familiesOfIndex, familyIndex } from './agent_family.ts';

/**
 * Link-preview fetchers: services that fetch a shared link to draw a card, not a person following it
 * (matched before the general bot list, which also contains most of them).
 */
const PREVIEW_FETCHERS =
  /slackbot|slack-imgproxy|twitterbot|facebookexternalhit|facebookcatalog|meta-externalagent|whatsapp|discordbot|mastodon|linkedinbot|telegrambot|skypeuripreview|microsoftpreview|redditbot|pinterestbot|embedly|iframely|bluesky|cardyb|vkshare|viber|snapchat|google-pagerenderer|applebot-extended|bitlybot/i;

/**
 * The black-box prober's User-Agent prefix (lib/prober): its requests are no click of any kind. A reader who sends
 * it hides only their own request, as not following the link would; nothing in one request touches another's
 * count (docs/REDIRECTS.md, "Clicks"; ADR 0068).
 */
export const PROBE_USER_AGENT_PREFIX = 'LifelineProbe/';

/** A user agent longer than this is classified by its first part only (bounded work per request). */
const USER_AGENT_MAX_LENGTH = 512;
/**
 * What the click path keeps of one User-Agent: the kind of click it makes and, for a reader, the agent itself,
 * whose browser and OS families the click buffer works out when it flushes (`familiesOf`), never on a request.
 * Interned: one object per distinct agent while it is remembered, so a click cell compares `key`, a number.
 */
export class Agent {
  readonly kind: AgentKind;
  /** The agent as sent (bounded by USER_AGENT_MAX_LENGTH); held in memory only, never written anywhere. */
  readonly ua: string;
  /**
   * The click buffer's key for the agent: NO_FAMILY for anything but a reader; a reader's own negative number
   * until its families are known, then their index (agent_family.ts), shared by every agent of that pair.
   */
  key: number;

  constructor(kind: AgentKind, ua: string) {
    this.kind = kind;
    this.ua = ua;
    this.key = kind === 'reader' ? nextUnclassified-- : NO_FAMILY;
  }
}
/** The key of an agent without families (not a reader): counted in no breakdown. */
export const NO_FAMILY = -1;
let nextUnclassified = -2;
type AgentKind = 'preview' | 'bot' | 'reader' | 'probe';

/** A HEAD request, and a request without a User-Agent (a bot), whatever else they send. */
export const HEAD_AGENT = new Agent('bot', '');
export const NO_AGENT = new Agent('bot', '');

/**
 * User agents repeat massively (a handful of browser builds make most traffic), and the bot patterns cost
 * ~3 µs per test: remember the verdict of recent agents (bounded, so odd agents cannot grow memory).
 */
const agents = new LRUCache<string, Agent>({ max: 5000 });
/**
 * The last agent classified, checked before the LRU: consecutive requests mostly come from the same browser
 * build, and comparing two strings is cheaper than hashing a new one (every request's header is a new string)
 * for the LRU's map.
 */
let lastUa = '';
let lastAgent: Agent = NO_AGENT;

/**
 * The remembered agent of a request: HEAD_AGENT for HEAD, NO_AGENT without a User-Agent, else the agent's kind
 * (the prober, a link-preview fetcher, any other bot by isbot, or a reader), worked out once per distinct agent.
 */
export function readAgent(method: string, userAgent: string | undefined): Agent {
  if (method === 'HEAD') return HEAD_AGENT;
  if (!userAgent) return NO_AGENT;
  const ua = userAgent.length > USER_AGENT_MAX_LENGTH ? userAgent.slice(0, USER_AGENT_MAX_LENGTH) : userAgent;
  if (ua === lastUa) return lastAgent;
  let agent = agents.get(ua);
  if (agent === undefined) {
    agent = new Agent(
      ua.startsWith(PROBE_USER_AGENT_PREFIX)
        ? 'probe'
        : PREVIEW_FETCHERS.test(ua)
          ? 'preview'
          : isbot(ua)
            ? 'bot'
            : 'reader',
      ua,
    );
    agents.set(ua, agent);
  }
  lastUa = ua;
  lastAgent = agent;
  return agent;
}

/** The click an agent's request makes: see classifyClick. */
export function clickKindOf(agent: Agent, query: string): ClickKind | null {
  if (agent === HEAD_AGENT) return 'head';
  const kind = agent.kind;
  if (kind === 'probe') return null;
  if (kind !== 'reader') return kind;
  if (query !== '' && hasQrMarker(query)) return 'qr';
  return 'human';
}

/**
 * The browser and OS families of a reader's agent, worked out at most once per agent object (its `key` becomes
 * their index); null for anything but a reader. Called by the click buffer as it flushes, off the request.
 */
export function familiesOf(agent: Agent): AgentFamilies | null {
  if (agent.kind !== 'reader') return null;
  if (agent.key < 0) agent.key = familyIndex(agentFamilies(agent.ua));
  return familiesOfIndex(agent.key);
}

/** Longest referrer host kept; a longer one is recorded as '' rather than truncated into a wrong host. */
export const REFERRER_HOST_MAX_LENGTH = 100;

/**
 * The kind of one answered request: HEAD → head; the prober (PROBE_USER_AGENT_PREFIX) → null, not a click; a
 * link-preview fetcher → preview; any other bot (isbot, or no User-Agent at all) → bot; `?qr=1` → qr; otherwise
 * human.
 */
export function classifyClick(
  method: string,
  userAgent: string | undefined,
  query: string,
): ClickKind | null {
  return clickKindOf(readAgent(method, userAgent), query);
}

/** True when the query string carries the QR-scan marker `qr=1`. */
export function hasQrMarker(query: string): boolean {
  return query === 'qr=1' || /(?:^|&)qr=1(?:&|$)/.test(query);
}

/** The country from the trusted CDN header: two ASCII letters, upper-cased; '' otherwise (e.g. Tor's "T1"). */
export function countryOf(value: string | undefined): string {
  if (!value || !/^[A-Za-z]{2}$/.test(value)) return '';
  const upper = value.toUpperCase();
  return upper === 'XX' ? '' : upper;
}

/**
 * The host of a Referer header, lower-cased, without port or credentials; '' when absent, not http(s),
 * or not a plain DNS name or address (so nothing a client sends can grow the stored key beyond the bound).
 */
export function referrerHostOf(referer: string | undefined): string {
  if (!referer) return '';
  const m = /^https?:\/\/([^/?#]*)/i.exec(referer.length > 2048 ? referer.slice(0, 2048) : referer);
  if (!m) return '';
  let host = m[1]!;
  const at = host.lastIndexOf('@');
  if (at >= 0) host = host.slice(at + 1);
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end < 0 ? '' : host.slice(0, end + 1);
  } else {
    const colon = host.indexOf(':');
    if (colon >= 0) host = host.slice(0, colon);
  }
  host = host.toLowerCase();
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host.length === 0 || host.length > REFERRER_HOST_MAX_LENGTH) return '';
  return /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/.test(host) ? host : '';
}
