// A real HTTP server reproducing RDAP for domains, as registries serve it, and IANA's bootstrap file that finds
// them, for tests. Sources (no live calls):
//   - The bootstrap file (RFC 9224 §4, IANA's https://data.iana.org/rdap/dns.json): `{version, publication,
//     description, services: [[[labels…], [base URLs…]], …]}`; each base URL ends with `/`; a client takes the
//     entry whose label matches the most labels of the name.
//   - The query (RFC 9082 §3.1.3): `GET <base>domain/<name>`, the name case-insensitive; `Accept:
//     application/rdap+json` (RFC 7480 §4.2).
//   - The answer (RFC 9083 §5.3): `objectClassName: "domain"`, `ldhName`, `status` (RFC 9083 §10.2.2 values:
//     `active`, `client transfer prohibited`, `server hold`, `redemption period`…), `events` with `eventAction`
//     `registration`, `expiration`, `last changed`, `last update of RDAP database` (§4.5, §10.2.3), `secureDNS`
//     with `delegationSigned` and `dsData` (§5.3; absent when a registry does not publish it), `entities` with the
//     `registrar` role and a jCard `fn` (§5.1, RFC 7095), `rdapConformance`, `notices`; media type
//     `application/rdap+json`.
//   - Errors (RFC 9083 §6): `{errorCode, title, description: […]}`; 404 for a name the registry does not hold
//     (RFC 7480 §5.3); 429 with Retry-After when a client asks too often (RFC 7480 §5.5; Verisign's and
//     others' servers answer it under load).
// Scripted failures (429, 5xx, slowness, drops, hangs) come from ScriptedHttpServer; `rateLimitNext` scripts a
// registry's 429 in its own shape.
import { type FakeAnswer, type FakeRequest, ScriptedFake } from './scripted_http_server.ts';

/** A domain as a registry holds it. */
export interface RdapFakeDomain {
  expiresAt: Date;
  registeredAt?: Date;
  lastChangedAt?: Date;
  /** RDAP status values; default `["client transfer prohibited", "active"]`. */
  statuses?: string[];
  /** `secureDNS.delegationSigned`; undefined: the answer has no `secureDNS` member at all. */
  delegationSigned?: boolean;
  registrar?: string;
}

const RDAP_TYPE = { 'Content-Type': 'application/rdap+json' };

const rdapError = (status: number, title: string, description: string, headers = {}): FakeAnswer => ({
  status,
  headers: { ...RDAP_TYPE, ...headers },
  body: JSON.stringify({ errorCode: status, title, description: [description] }),
});

export class RdapFake extends ScriptedFake {
  /** Registries by path segment: the TLDs each serves and the domains it holds. */
  private readonly registries = new Map<string, { labels: string[]; domains: Map<string, RdapFakeDomain> }>();

  /** IANA's dns.json as this fake publishes it. */
  get bootstrapUrl(): string {
    return `${this.server.url}/iana/rdap/dns.json`;
  }

  /** A registry serving the given TLD labels; returns its RDAP base URL (with the trailing slash). */
  addRegistry(name: string, labels: string[]): string {
    this.registries.set(name, { labels: labels.map((l) => l.toLowerCase()), domains: new Map() });
    return this.baseOf(name);
  }

  baseOf(registry: string): string {
    return `${this.server.url}/${registry}/`;
  }

  setDomain(registry: string, name: string, domain: RdapFakeDomain): void {
    const r = this.registries.get(registry);
    if (!r) throw new Error(`no registry ${registry}`);
    r.domains.set(name.toLowerCase(), domain);
  }

  /** The next `times` queries to `registry` answer 429 with `Retry-After: retryAfterSeconds`. */
  rateLimitNext(registry: string, retryAfterSeconds: number, times = 1): void {
    this.server.failNext({
      path: `/${registry}/`,
      times,
      answer: rdapError(429, 'Too Many Requests', 'Query rate exceeded; slow down.', {
        'Retry-After': String(retryAfterSeconds),
      }),
    });
  }

  /** Domain queries a registry received (lower-cased names), with the status each got. */
  queriesTo(registry: string): { name: string; status: number; at: number }[] {
    const prefix = `/${registry}/domain/`;
    return this.requests
      .filter((r) => r.path.startsWith(prefix))
      .map((r) => ({
        name: decodeURIComponent(r.path.slice(prefix.length)).toLowerCase(),
        status: r.status,
        at: r.at,
      }));
  }

  /** How many times the bootstrap file was fetched. */
  bootstrapFetches(): number {
    return this.requests.filter((r) => r.path === '/iana/rdap/dns.json').length;
  }

  protected clearRecords(): void {}

  protected answer(request: FakeRequest): FakeAnswer {
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return rdapError(405, 'Method Not Allowed', 'RDAP is read with GET.');
    if (request.path === '/iana/rdap/dns.json') {
      return {
        status: 200,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          version: '1.0',
          publication: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          description: 'RDAP bootstrap file for Domain Name System registrations',
          services: [...this.registries].map(([name, r]) => [r.labels, [this.baseOf(name)]]),
        }),
      };
    }
    const match = /^\/([^/]+)\/domain\/([^/]+)$/.exec(request.path);
    const registry = match ? this.registries.get(match[1]!) : undefined;
    if (!match || !registry) return rdapError(400, 'Bad Request', 'Unknown query path.');
    const name = decodeURIComponent(match[2]!).toLowerCase().replace(/\.$/, '');
    const domain = registry.domains.get(name);
    if (!domain) return rdapError(404, 'Not Found', `${name} is not registered here.`);
    const at = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');
    const body: Record<string, unknown> = {
      rdapConformance: [
        'rdap_level_0',
        'icann_rdap_response_profile_1',
        'icann_rdap_technical_implementation_guide_1',
      ],
      objectClassName: 'domain',
      handle: `${name.replace(/\./g, '_').toUpperCase()}-FAKE`,
      ldhName: name.toUpperCase(),
      status: domain.statuses ?? ['client transfer prohibited', 'active'],
      events: [
        {
          eventAction: 'registration',
          eventDate: at(domain.registeredAt ?? new Date('2015-03-01T10:00:00Z')),
        },
        { eventAction: 'expiration', eventDate: at(domain.expiresAt) },
        {
          eventAction: 'last changed',
          eventDate: at(domain.lastChangedAt ?? new Date('2025-03-01T10:00:00Z')),
        },
        { eventAction: 'last update of RDAP database', eventDate: at(new Date()) },
      ],
      entities: [
        {
          objectClassName: 'entity',
          handle: '9999',
          roles: ['registrar'],
          publicIds: [{ type: 'IANA Registrar ID', identifier: '9999' }],
          vcardArray: [
            'vcard',
            [
              ['version', {}, 'text', '4.0'],
              ['fn', {}, 'text', domain.registrar ?? 'Example Registrar, Inc.'],
            ],
          ],
        },
      ],
      nameservers: [
        { objectClassName: 'nameserver', ldhName: 'NS1.EXAMPLE-DNS.NET' },
        { objectClassName: 'nameserver', ldhName: 'NS2.EXAMPLE-DNS.NET' },
      ],
      notices: [
        {
          title: 'Terms of Use',
          description: ['Service subject to Terms of Use.'],
          links: [{ href: 'https://www.example/rdap-terms', type: 'text/html' }],
        },
      ],
    };
    if (domain.delegationSigned !== undefined) {
      body.secureDNS = domain.delegationSigned
        ? {
            delegationSigned: true,
            dsData: [{ keyTag: 12345, algorithm: 13, digestType: 2, digest: 'A'.repeat(64) }],
          }
        : { delegationSigned: false };
    }
    return { status: 200, headers: RDAP_TYPE, body: JSON.stringify(body) };
  }
}

/** Starts an RDAP fake on 127.0.0.1 (stop() closes it). */
export async function startRdapFake(): Promise<RdapFake> {
  return new RdapFake().start();
}
