// A real OpenID Connect provider for tests: panva's oidc-provider on loopback (discovery, JWKS, authorization
// with PKCE, consent, token endpoint, ID tokens signed RS256), its development login pages, and in front of it a
// relay that can change the ID token the token endpoint answers with, re-signed with the provider's own key —
// what a token made for another client, an expired one or one for another attempt looks like to the relying party.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export interface TestAccount {
  email: string;
  emailVerified?: boolean;
  name?: string;
  groups?: string[];
}

/** How the relay changes the next ID tokens: off, or one claim made wrong. */
export type IdTokenTamper = 'none' | 'audience' | 'expired' | 'nonce';

export interface TestOidcProvider {
  /** The issuer (the relay's origin): what Lifeline is configured with. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by the login typed on the provider's development login page. */
  accounts: Map<string, TestAccount>;
  tamper: IdTokenTamper;
  /** Authorization requests the provider received (their query), oldest first. */
  authorizationRequests: URLSearchParams[];
  close(): Promise<void>;
}

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

export async function startOidcProvider(options: { redirectUri: string }): Promise<TestOidcProvider> {
  const relay = createServer();
  const relayPort = await listen(relay);
  const issuer = `http://127.0.0.1:${relayPort}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  const clientId = 'lifeline-test';
  const clientSecret = 'a-test-client-secret-that-is-long-enough';
  const accounts = new Map<string, TestAccount>();

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['a-cookie-signing-key-for-the-test-provider'] },
    pkce: { required: () => true },
    // Google and Entra put the e-mail and groups in the ID token of a code flow; so does this provider.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    findAccount: async (_ctx: unknown, id: string) => {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          email: account.email,
          email_verified: account.emailVerified ?? true,
          name: account.name ?? id,
          groups: account.groups ?? [],
        }),
      };
    },
  } as never);
  const upstream = createServer(provider.callback());
  const upstreamPort = await listen(upstream);

  const state: TestOidcProvider = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    tamper: 'none',
    authorizationRequests: [],
    async close() {
      await Promise.all([new Promise((r) => relay.close(r)), new Promise((r) => upstream.close(r))]);
      relay.closeAllConnections();
      upstream.closeAllConnections();
    },
  };

  async function tamper(idToken: string): Promise<string> {
    const claims = decodeJwt(idToken);
    const header = decodeProtectedHeader(idToken);
    const now = Math.floor(Date.now() / 1000);
    if (state.tamper === 'audience') claims.aud = 'another-client';
    if (state.tamper === 'expired') Object.assign(claims, { iat: now - 3600, exp: now - 600 });
    if (state.tamper === 'nonce') claims.nonce = 'a-nonce-from-another-attempt';
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: header.kid as string, typ: 'JWT' })
      .sign(privateKey);
  }

  relay.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/auth') state.authorizationRequests.push(url.searchParams);
    const isToken = req.method === 'POST' && url.pathname === '/token';
    const forward = request(
      { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (!isToken || state.tamper === 'none') {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', async () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id_token?: string };
          if (body.id_token) body.id_token = await tamper(body.id_token);
          const text = JSON.stringify(body);
          const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(text)) };
          res.writeHead(answer.statusCode ?? 502, headers);
          res.end(text);
        });
      },
    );
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });

  return state;
}
