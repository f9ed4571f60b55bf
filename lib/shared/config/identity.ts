// Staff identity (docs/adr/0084-staff-identity.md): sign-in with an OpenID Connect provider (Google Workspace,
// Microsoft Entra, Okta…) and the second factor required of admins with a password.
import { z } from 'zod';
import type { IssueSink } from '../temporal_settings.ts';
import { commaList, flag, optionalHttpUrl, optionalString } from './env_values.ts';

const ROLE_NAMES = ['viewer', 'editor', 'moderator', 'admin'] as const;
type RoleName = (typeof ROLE_NAMES)[number];

/** `group=role` pairs, comma-separated; a group name keeps its case (providers compare them exactly). */
const groupRoles = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const out: [string, RoleName][] = [];
    for (const entry of (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = entry.lastIndexOf('=');
      const group = entry.slice(0, eq).trim();
      const role = entry
        .slice(eq + 1)
        .trim()
        .toLowerCase() as RoleName;
      if (eq <= 0 || !group || !ROLE_NAMES.includes(role)) {
        ctx.addIssue({
          code: 'custom',
          message: `"${entry}" must be group=role, role one of ${ROLE_NAMES.join(', ')}`,
        });
        return z.NEVER;
      }
      out.push([group, role]);
    }
    return out;
  });

export const identityEnv = z.object({
  REQUIRE_MFA_FOR_ADMINS: flag.default(false),
  OIDC_ISSUER_URL: optionalHttpUrl,
  OIDC_CLIENT_ID: optionalString,
  OIDC_CLIENT_SECRET: optionalString,
  OIDC_PROVIDER_NAME: optionalString,
  OIDC_SCOPES: z
    .string()
    .trim()
    .regex(/^[\x21-\x7e]+( [\x21-\x7e]+)*$/, 'must be scope names separated by spaces')
    .refine((v) => v.split(' ').includes('openid'), 'must include openid')
    .default('openid email profile'),
  OIDC_ALLOWED_EMAIL_DOMAINS: commaList,
  OIDC_GROUPS_CLAIM: z.string().trim().min(1).max(200).default('groups'),
  OIDC_GROUP_ROLES: groupRoles,
  OIDC_DEFAULT_ROLE: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum([...ROLE_NAMES, 'none'], 'must be viewer, editor, moderator, admin or none'))
    .default('none'),
});

type IdentityEnv = z.infer<typeof identityEnv>;

export function refineIdentityEnv(env: IdentityEnv, ctx: IssueSink): void {
  if (!env.OIDC_ISSUER_URL) return;
  for (const name of ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const) {
    if (!env[name])
      ctx.addIssue({ code: 'custom', path: [name], message: 'is required when OIDC_ISSUER_URL is set' });
  }
}

export interface OidcConfig {
  issuerUrl: string;
  clientId: string;
  /** Sent to the token endpoint only; never logged. */
  clientSecret: string;
  /** The button's label: "Sign in with {providerName}". */
  providerName: string;
  scopes: string;
  /** Lower-case domains an e-mail must be in to sign in; empty: any the provider vouches for. */
  allowedEmailDomains: string[];
  groupsClaim: string;
  /** In order: the first pair whose group the person is in gives the role. */
  groupRoles: [string, RoleName][];
  /** The role of a new account no group maps; undefined (`none`): such a person is refused. */
  defaultRole: RoleName | undefined;
}

export interface IdentityConfig {
  /** REQUIRE_MFA_FOR_ADMINS: an admin signed in with a password must set up TOTP before anything else. */
  requireMfaForAdmins: boolean;
  /** Sign-in with an OpenID Connect provider; undefined when OIDC_ISSUER_URL is unset. */
  oidc: OidcConfig | undefined;
}

export function identityConfig(e: IdentityEnv): IdentityConfig {
  return {
    requireMfaForAdmins: e.REQUIRE_MFA_FOR_ADMINS,
    oidc: e.OIDC_ISSUER_URL
      ? {
          issuerUrl: e.OIDC_ISSUER_URL,
          clientId: e.OIDC_CLIENT_ID ?? '',
          clientSecret: e.OIDC_CLIENT_SECRET ?? '',
          providerName: e.OIDC_PROVIDER_NAME ?? new URL(e.OIDC_ISSUER_URL).hostname,
          scopes: e.OIDC_SCOPES,
          allowedEmailDomains: e.OIDC_ALLOWED_EMAIL_DOMAINS,
          groupsClaim: e.OIDC_GROUPS_CLAIM,
          groupRoles: e.OIDC_GROUP_ROLES,
          defaultRole: e.OIDC_DEFAULT_ROLE === 'none' ? undefined : e.OIDC_DEFAULT_ROLE,
        }
      : undefined,
  };
}
