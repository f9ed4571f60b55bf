// Sign-in with an OpenID Connect provider (Google Workspace, Microsoft Entra, Okta…): discovery, authorization
// code with PKCE (S256), state and nonce kept in a ten-minute attempt taken once, the ID token checked by
// openid-client (signature by the provider's JWKS, issuer, audience, expiry, nonce). An account is the
// provider's (issuer, subject); new people get an account with the role their groups map to. ADR 0084.
import * as oidc from 'openid-client';
import type { OidcConfig } from '../shared/config/identity.ts';
import { randomToken, sha256Hex } from '../shared/crypto.ts';
import { AppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import {
  createOutgoingFetch,
  OutgoingRequestRefused,
  type OutgoingRule,
} from '../shared/outgoing_request.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  getUserIdByIdentity,
  insertIdentity,
  insertLoginAttempt,
  takeLoginAttempt,
  touchIdentity,
} from '../stores/identity_store.ts';
import type { Sql } from '../stores/sql.ts';
import {
  getUserByEmail,
  getUserById,
  insertUser,
  type UserRole,
  type UserRow,
  updateUser,
} from '../stores/user_store.ts';
import { hashPassword } from './passwords.ts';

/** How long a person has at the provider before the attempt is forgotten. */
export const OIDC_ATTEMPT_MS = 10 * 60 * 1000;
/** Where the provider sends people back, under the app's public URL (register exactly this at the provider). */
export const OIDC_CALLBACK_PATH = '/ui/login/oidc/callback';

/** Why a sign-in at the provider did not sign anybody in; each has its own message in the UI catalogs. */
export type OidcRefusal =
  | 'state' // no attempt with this state for this browser: replayed, expired, or started elsewhere
  | 'provider' // the provider answered with an error, or could not be reached
  | 'audience' // the ID token was made for another client
  | 'expired' // the ID token is past its expiry
  | 'nonce' // the ID token does not carry this attempt's nonce
  | 'token' // the ID token failed another check (signature, issuer…)
  | 'email' // no e-mail address, or one the provider does not vouch for
  | 'domain' // an e-mail outside OIDC_ALLOWED_EMAIL_DOMAINS
  | 'role' // a new person no group maps to a role, and OIDC_DEFAULT_ROLE is none
  | 'taken' // a local account has this address and may not be linked by it
  | 'disabled'; // the linked account is disabled

export class OidcSignInError extends AppError {
  constructor(
    readonly reason: OidcRefusal,
    detail: string,
  ) {
    super(reason === 'provider' ? 502 : 403, `oidc-${reason}`, 'Sign-in refused', detail);
  }
}

export interface OidcSignIn {
  /** The provider's authorization URL for a new attempt, and the state the browser must bring back. */
  begin(nextPath: string): Promise<{ url: URL; state: string }>;
  /**
   * Finishes the attempt the callback URL's state names (`browserState`: the state this browser was given):
   * the user signed in, and where they were going.
   */
  finish(callbackQuery: string, browserState: string | undefined): Promise<{ user: UserRow; next: string }>;
}

/** The role a new person gets: the first group mapping they match, else the default (undefined: refused). */
export function roleForGroups(config: OidcConfig, groups: readonly string[]): UserRole | undefined {
  for (const [group, role] of config.groupRoles) if (groups.includes(group)) return role;
  return config.defaultRole;
}

function claimGroups(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  if (typeof value === 'string') return [value];
  return [];
}

/**
 * The claim an ID-token check failed on: openid-client wraps oauth4webapi's error, whose own cause names the claim
 * (`{ claim: 'aud' | 'exp' | 'nonce' | … }`); undefined when the failure was not a claim's.
 */
function failedClaim(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const claim = (current as { claim?: unknown }).claim;
    if (typeof claim === 'string') return claim;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Names the failed step from openid-client's error, for a message people understand. */
function refusalOf(error: unknown): OidcRefusal {
  if (error instanceof oidc.AuthorizationResponseError || error instanceof oidc.ResponseBodyError)
    return 'provider';
  const claim = failedClaim(error);
  if (claim === 'aud' || claim === 'azp') return 'audience';
  if (claim === 'exp') return 'expired';
  if (claim === 'nonce') return 'nonce';
  // A failed request (fetch's TypeError, the outgoing-request rule's refusal) is the provider being unreachable.
  if (error instanceof TypeError || error instanceof OutgoingRequestRefused) return 'provider';
  return 'token';
}

export function createOidcSignIn(deps: {
  sql: Sql;
  logger: Logger;
  config: OidcConfig;
  appBaseUrl: string;
  outgoing: OutgoingRule;
}): OidcSignIn {
  const { config } = deps;
  const redirectUri = `${deps.appBaseUrl}${OIDC_CALLBACK_PATH}`;
  // Every request to the provider obeys the outgoing-request rule (ADR 0058): a provider on a private address
  // or plain http only when OUTGOING_ALLOWED_PRIVATE names it.
  const outgoingFetch = createOutgoingFetch(deps.outgoing);
  const providerFetch: oidc.CustomFetch = (url, options) => outgoingFetch(url, options as RequestInit);

  let discovered: Promise<oidc.Configuration> | undefined;
  function configuration(): Promise<oidc.Configuration> {
    discovered ??= oidc
      .discovery(
        new URL(config.issuerUrl),
        config.clientId,
        undefined,
        oidc.ClientSecretPost(config.clientSecret),
        {
          [oidc.customFetch]: providerFetch,
          // http reaches only a host the operator allowed (above); openid-client asks to be told so.
          ...(config.issuerUrl.startsWith('http:') ? { execute: [oidc.allowInsecureRequests] } : {}),
          timeout: 10,
        },
      )
      .catch((error) => {
        discovered = undefined; // the next sign-in tries again
        throw error;
      });
    return discovered;
  }

  async function begin(nextPath: string) {
    let server: oidc.Configuration;
    try {
      server = await configuration();
    } catch (error) {
      deps.logger.warn(
        { err: { message: (error as Error).message }, issuer: config.issuerUrl },
        'OIDC discovery failed',
      );
      throw new OidcSignInError('provider', 'The sign-in provider could not be reached.');
    }
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    await insertLoginAttempt(deps.sql, {
      stateHash: await sha256Hex(`lifeline-oidc-state:${state}`),
      nonce,
      codeVerifier,
      nextPath,
      expiresAt: new Date(Date.now() + OIDC_ATTEMPT_MS),
    });
    const url = oidc.buildAuthorizationUrl(server, {
      redirect_uri: redirectUri,
      scope: config.scopes,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url, state };
  }

  async function finish(callbackQuery: string, browserState: string | undefined) {
    const params = new URLSearchParams(callbackQuery);
    const state = params.get('state') ?? '';
    // The browser must bring back the state it was given (a cookie): a callback link started by someone else
    // does not sign this browser in to their account.
    if (!state || !browserState || state !== browserState) {
      throw new OidcSignInError('state', 'This sign-in was not started in this browser.');
    }
    const attempt = await takeLoginAttempt(deps.sql, await sha256Hex(`lifeline-oidc-state:${state}`));
    if (!attempt) throw new OidcSignInError('state', 'This sign-in was used already or has expired.');
    let claims: oidc.IDToken;
    try {
      const server = await configuration();
      const tokens = await oidc.authorizationCodeGrant(server, new URL(`${redirectUri}?${params}`), {
        pkceCodeVerifier: attempt.codeVerifier,
        expectedState: state,
        expectedNonce: attempt.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims()!;
    } catch (error) {
      const reason = refusalOf(error);
      deps.logger.warn(
        {
          reason,
          claim: failedClaim(error),
          err: { message: (error as Error).message, code: (error as { code?: string }).code },
        },
        'OIDC sign-in refused',
      );
      throw new OidcSignInError(reason, `The provider's answer was refused (${reason}).`);
    }
    const user = await accountFor(claims);
    return { user, next: attempt.nextPath };
  }

  /** The account of the token's (issuer, subject): linked before, linked now by a vouched address, or new. */
  async function accountFor(claims: oidc.IDToken): Promise<UserRow> {
    const issuer = claims.iss;
    const subject = claims.sub;
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : null;
    // Linking an existing account needs the provider to say it checked the address; a new account only that it
    // did not say the opposite (Entra sends no email_verified at all).
    const verified = claims.email_verified === true;
    const domain = email?.split('@')[1] ?? '';
    if (email && config.allowedEmailDomains.length > 0 && !config.allowedEmailDomains.includes(domain)) {
      throw new OidcSignInError('domain', `${domain} is not one of the allowed e-mail domains.`);
    }
    const linkedId = await getUserIdByIdentity(deps.sql, issuer, subject);
    if (linkedId !== null) {
      const user = await getUserById(deps.sql, linkedId);
      if (!user || user.disabledAt) throw new OidcSignInError('disabled', 'This account is disabled.');
      await touchIdentity(deps.sql, issuer, subject, email);
      return (await updateUser(deps.sql, user.id, { lastLoginAt: new Date() })) ?? user;
    }
    if (!email || claims.email_verified === false) {
      throw new OidcSignInError('email', 'The provider did not vouch for an e-mail address.');
    }
    const existing = await getUserByEmail(deps.sql, email);
    if (existing) {
      // A local account is linked by its address only when the address is in a domain the operator named: that
      // organisation's provider is the one that gives out its addresses.
      if (config.allowedEmailDomains.length === 0 || !verified) {
        throw new OidcSignInError('taken', 'An account with this e-mail exists and cannot be linked.');
      }
      if (existing.disabledAt) throw new OidcSignInError('disabled', 'This account is disabled.');
      return deps.sql.begin(async (tx) => {
        await insertIdentity(tx, { issuer, subject, userId: existing.id, email });
        await insertAuditEntry(tx, {
          code: null,
          actor: email,
          action: 'user.identity_linked',
          after: { id: existing.id, issuer },
        });
        return (await updateUser(tx, existing.id, { lastLoginAt: new Date() })) ?? existing;
      });
    }
    const role = roleForGroups(config, claimGroups(claims[config.groupsClaim]));
    if (!role) throw new OidcSignInError('role', 'No role is mapped to your groups.');
    // The account has a password nobody knows: it signs in at the provider (a reset by an admin can give one).
    const passwordHash = await hashPassword(randomToken(40));
    const name = typeof claims.name === 'string' ? claims.name.slice(0, 100) : null;
    return deps.sql.begin(async (tx) => {
      const user = await insertUser(tx, { email, name, passwordHash, role });
      if (!user)
        throw new OidcSignInError('taken', 'An account with this e-mail exists and cannot be linked.');
      await insertIdentity(tx, { issuer, subject, userId: user.id, email });
      await insertAuditEntry(tx, {
        code: null,
        actor: email,
        action: 'user.created',
        after: { id: user.id, email, role, via: 'oidc', issuer },
      });
      return (await updateUser(tx, user.id, { lastLoginAt: new Date() })) ?? user;
    });
  }

  return { begin, finish };
}
