import ipaddr from 'ipaddr.js';
import type { ScanFinding } from './scan_result.ts';

/** Schemes a short link may send a reader to. */
export const ALLOWED_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:']);

// Names that never reach a public host: loopback by name (RFC 6761), mDNS, and private-use suffixes.
const LOOPBACK_NAMES = ['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback'];
const PRIVATE_SUFFIXES = ['localhost', 'local', 'internal', 'intranet', 'lan', 'home.arpa', 'localdomain'];

/**
 * The host of `url` as the URL parser normalises it: lower case, punycode, IPv4 in dotted decimal (so
 * `0x7f.1`, `2130706433` and `0177.0.0.1` all read `127.0.0.1`), IPv6 without brackets, no trailing dot.
 */
export function getNormalisedHost(url: URL): string {
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return host.replace(/\.+$/, '');
}

/** True when `host` is `pattern` or one of its subdomains. */
export function isHostOrSubdomain(host: string, pattern: string): boolean {
  return host === pattern || host.endsWith(`.${pattern}`);
}

/**
 * Scheme, address and host-name rules that need no lookup: blocked for non-http(s) schemes, credentials
 * in the URL, IP literals in non-public ranges (v4 and v6, including v4 embedded in mapped, NAT64, 6to4
 * and Teredo forms) and private-use names; a warning for public IP literals (phishing pages favour them).
 */
export function checkUrlRules(value: string): ScanFinding[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [{ verdict: 'blocked', rule: 'scheme', reason: 'not an absolute URL' }];
  }
  if (!ALLOWED_SCHEMES.has(url.protocol)) {
    return [{ verdict: 'blocked', rule: 'scheme', reason: `the ${url.protocol} scheme is not allowed` }];
  }
  const findings: ScanFinding[] = [];
  if (url.username !== '' || url.password !== '') {
    // `https://bank.example@evil.example/` shows one host and opens another.
    findings.push({
      verdict: 'blocked',
      rule: 'credentials',
      reason: 'the URL carries user-info before its host, a known way to disguise the real host',
    });
  }
  const host = getNormalisedHost(url);
  const address = classifyAddress(host);
  if (address) {
    findings.push(address);
    return findings;
  }
  if (LOOPBACK_NAMES.includes(host) || PRIVATE_SUFFIXES.some((s) => isHostOrSubdomain(host, s))) {
    findings.push({ verdict: 'blocked', rule: 'special_host', reason: `${host} is not a public host` });
  } else if (!host.includes('.')) {
    findings.push({
      verdict: 'blocked',
      rule: 'special_host',
      reason: `${host} is a single-label name that only resolves inside a private network`,
    });
  }
  return findings;
}

/** A finding for a host that is an IP literal, or null when it is a name. */
function classifyAddress(host: string): ScanFinding | null {
  if (!ipaddr.isValid(host)) return null;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(host);
  } catch {
    return null;
  }
  const embedded = address.kind() === 'ipv6' ? getEmbeddedIpv4(address as ipaddr.IPv6) : null;
  if (embedded) {
    return classifyIpv4(embedded, `${host} carries the IPv4 address ${embedded.toString()}, which`);
  }
  if (address.kind() === 'ipv4') return classifyIpv4(address as ipaddr.IPv4);
  const range = (address as ipaddr.IPv6).range();
  if (range !== 'unicast') {
    return {
      verdict: 'blocked',
      rule: 'private_address',
      reason: `${host} is in a non-public IPv6 range (${range})`,
    };
  }
  return ipLiteralWarning(host);
}

function classifyIpv4(address: ipaddr.IPv4, subject = address.toString()): ScanFinding {
  const range = address.range();
  if (range !== 'unicast') {
    return {
      verdict: 'blocked',
      rule: 'private_address',
      reason: `${subject} is in a non-public IPv4 range (${range})`,
    };
  }
  return ipLiteralWarning(subject === address.toString() ? subject : `${subject} is public but`);
}

function ipLiteralWarning(subject: string): ScanFinding {
  return { verdict: 'warn', rule: 'ip_literal', reason: `${subject} is a raw IP address, not a host name` };
}

/**
 * The IPv4 address an IPv6 literal carries, for the forms a browser or a NAT64/6to4/Teredo path may route
 * to it: mapped (::ffff:a.b.c.d), translated, compatible (::a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002::/16)
 * and Teredo (2001::/32, client address inverted).
 */
export function getEmbeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const v4 = (hi: number, lo: number) =>
    new ipaddr.IPv4([(hi >> 8) & 0xff, hi & 0xff, (lo >> 8) & 0xff, lo & 0xff]);
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return v4(p[6]!, p[7]!);
  if (range === '6to4') return v4(p[1]!, p[2]!);
  if (range === 'teredo') return v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff);
  // Deprecated IPv4-compatible form: the first 96 bits are zero (but not :: or ::1).
  if (p.slice(0, 6).every((x) => x === 0) && (p[6]! !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!);
  return null;
}
