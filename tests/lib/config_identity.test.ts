import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { roleForGroups } from '../../lib/auth/oidc_sign_in.ts';
import { ConfigError, parseConfig } from '../../lib/shared/config.ts';

// Staff identity settings: the OpenID Connect provider and how new people get a role, and the second factor
// required of admins. A bad value names the variable and stops start-up.
function refused(env: Record<string, string>, variable: string, message?: RegExp): void {
  assert.throws(
    () => parseConfig(env),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.problems.some((p) => p.variable === variable && (!message || message.test(p.message))),
    `${variable} should be refused for ${JSON.stringify(env)}`,
  );
}

const PROVIDER = {
  OIDC_ISSUER_URL: 'https://login.microsoftonline.com/tenant-id/v2.0/',
  OIDC_CLIENT_ID: 'lifeline',
  OIDC_CLIENT_SECRET: 'a-client-secret',
};

describe('configuration: staff identity', () => {
  test('off by default: no provider, admins not held to a second factor', () => {
    const config = parseConfig({});
    assert.equal(config.oidc, undefined);
    assert.equal(config.requireMfaForAdmins, false);
    assert.equal(parseConfig({ REQUIRE_MFA_FOR_ADMINS: 'true' }).requireMfaForAdmins, true);
  });

  test('a provider: its defaults, the issuer without its trailing slash, the group mapping in order', () => {
    const config = parseConfig({
      ...PROVIDER,
      OIDC_ALLOWED_EMAIL_DOMAINS: 'Newsroom.example, bureau.example',
      OIDC_GROUP_ROLES: 'Lifeline Admins=admin, desk=Editor',
      OIDC_DEFAULT_ROLE: 'viewer',
    });
    assert.deepEqual(config.oidc, {
      issuerUrl: 'https://login.microsoftonline.com/tenant-id/v2.0',
      clientId: 'lifeline',
      clientSecret: 'a-client-secret',
      providerName: 'login.microsoftonline.com',
      scopes: 'openid email profile',
      allowedEmailDomains: ['newsroom.example', 'bureau.example'],
      groupsClaim: 'groups',
      groupRoles: [
        ['Lifeline Admins', 'admin'],
        ['desk', 'editor'],
      ],
      defaultRole: 'viewer',
    });
    assert.equal(roleForGroups(config.oidc!, ['desk', 'Lifeline Admins']), 'admin', 'the first mapping wins');
    assert.equal(roleForGroups(config.oidc!, ['lifeline admins']), 'viewer', 'groups compare exactly');
    assert.equal(roleForGroups({ ...config.oidc!, defaultRole: undefined }, []), undefined);
  });

  test('refused: a provider without its client, a mapping to no role, scopes without openid', () => {
    refused({ OIDC_ISSUER_URL: PROVIDER.OIDC_ISSUER_URL }, 'OIDC_CLIENT_ID', /required/);
    refused({ ...PROVIDER, OIDC_CLIENT_SECRET: '' }, 'OIDC_CLIENT_SECRET', /required/);
    refused({ ...PROVIDER, OIDC_GROUP_ROLES: 'desk=owner' }, 'OIDC_GROUP_ROLES', /group=role/);
    refused({ ...PROVIDER, OIDC_GROUP_ROLES: 'editor' }, 'OIDC_GROUP_ROLES');
    refused({ ...PROVIDER, OIDC_SCOPES: 'email profile' }, 'OIDC_SCOPES', /openid/);
    refused({ ...PROVIDER, OIDC_DEFAULT_ROLE: 'superuser' }, 'OIDC_DEFAULT_ROLE');
    refused({ OIDC_ISSUER_URL: 'ftp://idp.example' }, 'OIDC_ISSUER_URL');
  });
});
