// The one rule for every server-side request to a URL someone configured or sent us (ADR 0058): https only,
// and never to a loopback, private, link-local, CGNAT, unique-local, multicast, unspecified, reserved or cloud-metadata address. Checked where the socket is opened, on every address the
// name resolves to (so a name that resolves to 127.0.0.1, or rebinds to it between two lookups, is refused
// too) and on IP literals; an operator may allow private addresses or hosts by name (OUTGOING_ALLOWED_PRIVATE).
//
// undici is loaded on first use, not at import: the web tier also runs on Deno, and only the worker and the
// report webhook ever send such a request.
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** Who may be reached although private: host names (exact), IP addresses and CIDR ranges. */
export interface OutgoingRule {
  /** OUTGOING_ALLOWED_PRIVATE, parsed: e.g. `["10.20.0.0/16", "hooks.internal", "127.0.0.1"]`. */
  allowPrivate: readonly string[];
  /**
   * Plain http to any address the rule allows, not only to allowed private hosts. Only for the destination
   * checks (ADR 0071): links point at http sites too, and the check sends nothing secret and reads no answer it
   * trusts. Private addresses stay refused all the same.
   */
  plainHttp?: boolean;
}

/** No private address allowed: the default for every caller that is not told otherwise. */
export const STRICT_OUTGOING_RULE: OutgoingRule = { allowPrivate: [] };

/** A request the rule refused before any byte was sent. The message says why; it never carries a body. */
export class OutgoingRequestRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

// Cloud instance metadata and credential endpoints (AWS/GCP/Azure, ECS task credentials, AWS IPv6, Alibaba,
// Oracle): refused even inside an allowed range, because nothing we call lives there and they hand out keys.
const METADATA_ADDRESSES = new Set([
  '169.254.169.254',
  '169.254.170.2',
  '169.254.170.23',
  'fd00:ec2::254',
  'fd00:ec2::23',
  '100.100.100.200',
  '192.0.0.192',
]);

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A CIDR, an IP address or a host name, as OUTGOING_ALLOWED_PRIVATE accepts it; null when it is none. */
export function parseAllowanceEntry(
  entry: string,
): { kind: 'range'; range: [Address, number] } | { kind: 'host'; host: string } | null {
  const value = entry.trim().toLowerCase();
  if (value.includes('/')) {
    try {
      const [address, bits] = ipaddr.parseCIDR(value);
      return {
        kind: 'range',
        range: [normalise(address), address.kind() === 'ipv6' && isEmbedding(address) ? bits - 96 : bits],
      };
    } catch {
      return null;
    }
  }
  const bare = value.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(bare)) {
    const address = normalise(ipaddr.parse(bare));
    return { kind: 'range', range: [address, address.kind() === 'ipv4' ? 32 : 128] };
  }
  if (/^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$/.test(value)) {
    return { kind: 'host', host: value.replace(/\.$/, '') };
  }
  return null;
}

function isEmbedding(address: Address): boolean {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress();
}

/** IPv4-mapped IPv6 (`::ffff:127.0.0.1`) as the IPv4 address it is. */
function normalise(address: Address): Address {
  return isEmbedding(address) ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

/**
 * The IPv4 address an IPv6 address reaches through a translation (NAT64, SIIT, 6to4, Teredo), for checking
 * where the packet really goes; null for a plain IPv6 address.
 */
function getTranslatedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const v4 = (hi: number, lo: number) =>
    new ipaddr.IPv4([(hi >> 8) & 0xff, hi & 0xff, (lo >> 8) & 0xff, lo & 0xff]);
  const range = address.range();
  if (range === 'rfc6145' || range === 'rfc6052') return v4(p[6]!, p[7]!);
  if (range === '6to4') return v4(p[1]!, p[2]!);
  if (range === 'teredo') return v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff);
  return null;
}

const normaliseHost = (host: string) =>
  host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '');

function isHostAllowed(host: string, rule: OutgoingRule): boolean {
  const name = normaliseHost(host);
  return rule.allowPrivate.some((entry) => {
    const parsed = parseAllowanceEntry(entry);
    return parsed?.kind === 'host' && parsed.host === name;
  });
}

function isAddressAllowed(address: Address, rule: OutgoingRule): boolean {
  return rule.allowPrivate.some((entry) => {
    const parsed = parseAllowanceEntry(entry);
    return (
      parsed?.kind === 'range' &&
      parsed.range[0].kind() === address.kind() &&
      address.match(parsed.range as [ipaddr.IPv4, number] & [ipaddr.IPv6, number])
    );
  });
}

/**
 * Why `host` (the name asked for) may not be reached at `addressText`, or null when it may: a public unicast
 * address, or one the operator allowed by range or by the host's name. Metadata addresses never.
 */
export function getAddressProblem(addressText: string, host: string, rule: OutgoingRule): string | null {
  const bare = normaliseHost(addressText);
  if (!ipaddr.isValid(bare)) return `${bare} is not an IP address`;
  const address = normalise(ipaddr.parse(bare));
  const shown = address.toString();
  if (METADATA_ADDRESSES.has(shown)) return `${shown} is a cloud metadata address`;
  const translated = address.kind() === 'ipv6' ? getTranslatedIpv4(address as ipaddr.IPv6) : null;
  if (translated && METADATA_ADDRESSES.has(translated.toString()))
    return `${shown} reaches the cloud metadata address ${translated.toString()}`;
  if (isHostAllowed(host, rule) || isAddressAllowed(address, rule)) return null;
  if (translated && isAddressAllowed(translated, rule)) return null;
  const range = (translated ?? address).range();
  if (range !== 'unicast') {
    const via = translated ? ` (it reaches ${translated.toString()})` : '';
    return `${shown}${via} is a ${range} address, not a public one (OUTGOING_ALLOWED_PRIVATE may allow it)`;
  }
  return null;
}

/**
 * What is wrong with sending a request to `url` before any lookup: not https (http only to a host or address
 * the operator allowed), credentials in it, or an IP literal the rule refuses. Null when it may be tried.
 */
export function getOutgoingUrlProblem(url: URL, rule: OutgoingRule): string | null {
  const host = normaliseHost(url.hostname);
  if (url.username !== '' || url.password !== '') return `${url.host}: user-info in a URL is not sent`;
  const literal = ipaddr.isValid(host);
  if (url.protocol === 'http:' && !rule.plainHttp) {
    const allowed = literal
      ? isAddressAllowed(normalise(ipaddr.parse(host)), rule)
      : isHostAllowed(host, rule);
    if (!allowed)
      return `${url.host}: only https is allowed (plain http only to a host OUTGOING_ALLOWED_PRIVATE names)`;
  } else if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return `${url.protocol} is not allowed (https only)`;
  }
  if (literal) return getAddressProblem(host, host, rule);
  // Loopback by name (RFC 6761), refused before any lookup: some resolvers answer it, some do not.
  if ((host === 'localhost' || host.endsWith('.localhost')) && !isHostAllowed(host, rule))
    return `${host} is a loopback name (OUTGOING_ALLOWED_PRIVATE may allow it)`;
  return null;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `dns.lookup`-shaped resolver (tests pass one that answers a made-up name). */
export type OutgoingLookup = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

type Dispatcher = import('undici').Dispatcher;
type UndiciFetch = typeof import('undici').fetch;

type LoadedAgent = { dispatcher: Dispatcher; fetch: UndiciFetch };

// One connection pool per allowance (callers share it); an injected resolver gets a pool of its own.
const agents = new Map<string, Promise<LoadedAgent>>();

/**
 * A `dns.lookup`-shaped function for `net.connect` / `http.request` that resolves with `resolve` and keeps only
 * the addresses the rule allows; when none is left it fails with OutgoingRequestRefused. Note that net.connect
 * skips the lookup for an IP literal: a caller checks literals itself (getOutgoingUrlProblem does).
 */
export function createRuleLookup(rule: OutgoingRule, resolve: OutgoingLookup) {
  // Every address the name resolves to is checked; the refused ones are dropped, and when none is left the
  // connection fails. net.connect calls this for every name, also the ones a redirect led to.
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    resolve(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const kept = addresses.filter((a) => getAddressProblem(a.address, hostname, rule) === null);
      if (kept.length === 0) {
        const reason = addresses[0] ? getAddressProblem(addresses[0].address, hostname, rule) : 'no address';
        return callback(new OutgoingRequestRefused(`${hostname} was not connected to: ${reason}`), []);
      }
      if (options.all) return callback(null, kept);
      return callback(null, kept[0]!.address, kept[0]!.family);
    });
  };
}

async function loadAgent(rule: OutgoingRule, resolve?: OutgoingLookup): Promise<LoadedAgent> {
  const [{ Agent, buildConnector, fetch: undiciFetch }, dns] = await Promise.all([
    import('undici'),
    import('node:dns'),
  ]);
  const lookup = createRuleLookup(
    rule,
    resolve ?? ((hostname, options, callback) => dns.lookup(hostname, options, callback)),
  );
  const connectWithLookup = buildConnector({ lookup: lookup as never });
  const dispatcher = new Agent({
    connect(options, callback) {
      // net.connect skips the lookup for an IP literal: checked here.
      const host = normaliseHost(options.hostname);
      if (ipaddr.isValid(host)) {
        const problem = getAddressProblem(host, host, rule);
        if (problem)
          return callback(new OutgoingRequestRefused(`${host} was not connected to: ${problem}`), null);
      }
      return connectWithLookup(options, callback);
    },
  });
  return { dispatcher, fetch: undiciFetch };
}

/** Resolves once the shared pool for `rule` is loaded (undici's import can take a while on a busy machine). */
export async function loadOutgoingRequests(rule: OutgoingRule = STRICT_OUTGOING_RULE): Promise<void> {
  await getSharedAgent(rule);
}

function getSharedAgent(rule: OutgoingRule): Promise<LoadedAgent> {
  const key = JSON.stringify(rule.allowPrivate);
  let agent = agents.get(key);
  if (!agent) {
    agent = loadAgent(rule);
    agents.set(key, agent);
  }
  return agent;
}

/**
 * A fetch that obeys the rule. Redirects are not followed unless the caller asks (`redirect: 'follow'`), and a
 * followed one is checked at connect time like the first hop. A refusal rejects with OutgoingRequestRefused.
 */
export function createOutgoingFetch(
  rule: OutgoingRule = STRICT_OUTGOING_RULE,
  options: { lookup?: OutgoingLookup } = {},
): typeof fetch {
  // Loading starts now, not at the first request, so undici's import does not eat into a caller's deadline.
  const ownAgent = options.lookup ? loadAgent(rule, options.lookup) : getSharedAgent(rule);
  ownAgent.catch(() => {});
  const outgoingFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input);
    const problem = getOutgoingUrlProblem(url, rule);
    if (problem) throw new OutgoingRequestRefused(problem);
    const { dispatcher, fetch: undiciFetch } = await ownAgent;
    try {
      return (await undiciFetch(url, {
        ...(init as Parameters<UndiciFetch>[1]),
        redirect: init.redirect ?? 'manual',
        dispatcher,
      })) as unknown as Response;
    } catch (error) {
      // undici reports a failed connection as `TypeError: fetch failed` with the reason as its cause.
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof OutgoingRequestRefused) throw cause;
      throw error;
    }
  };
  return outgoingFetch as typeof fetch;
}
