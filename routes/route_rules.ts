// Every route of the API and the UI with what it needs (docs/adr/0084-staff-identity.md). The authorize
// middleware (routes/middleware/authorize.ts) looks the matched route up here and refuses a route it does not
// find; tests/security/route_permissions.test.ts walks every registered route against this table and each role.
import type { Permission } from '../lib/auth/permissions.ts';

/**
 * `public`: anyone, or authenticated by the route itself (a signed webhook, the sign-in pages);
 * `signed-in`: any signed-in staff member, whatever the role (their own account and sessions);
 * a permission: a session whose role holds it (UI) or an API key whose scopes hold it (API).
 */
export type RouteRule = 'public' | 'signed-in' | Permission;

/** `METHOD /full/path` as Hono registers it (HEAD is answered by the GET route). */
export const ROUTE_RULES: Readonly<Record<string, RouteRule>> = {
  // API: links
  'POST /api/v1/links': 'links:write',
  'POST /api/v1/links/batch': 'links:write',
  'GET /api/v1/links': 'links:read',
  'GET /api/v1/links/by-post/:site/:postId': 'links:read',
  'GET /api/v1/links/:code/stats': 'links:read',
  'GET /api/v1/links/:code': 'links:read',
  'PATCH /api/v1/links/:code': 'links:write',
  'DELETE /api/v1/links/:code': 'links:write',
  'GET /api/v1/links.csv': 'links:read',
  'GET /api/v1/links/:code/clicks.csv': 'links:read',
  'POST /api/v1/safety/check': 'links:write',
  'GET /api/v1/destinations': 'links:read',
  'POST /api/v1/destinations/:code/policy': 'links:write',
  'POST /api/v1/destinations/:code/retarget': 'links:write',
  'POST /api/v1/destinations/hosts/:host/policy': 'admin',
  // API: moderation
  'GET /api/v1/reports': 'moderation',
  'GET /api/v1/reports/:code': 'moderation',
  'POST /api/v1/reports/:code/resolve': 'moderation',
  'GET /api/v1/blocklist': 'moderation',
  'POST /api/v1/blocklist': 'moderation',
  'DELETE /api/v1/blocklist': 'moderation',
  // API: administration
  'POST /api/v1/keys': 'admin',
  'GET /api/v1/keys': 'admin',
  'DELETE /api/v1/keys/:id': 'admin',
  'GET /api/v1/ops/front': 'admin',
  'GET /api/v1/ops/runs': 'admin',
  'POST /api/v1/ops/failover': 'admin',
  'POST /api/v1/ops/front/dns-changed': 'admin',
  'POST /api/v1/ops/reconcile': 'admin',
  'POST /api/v1/ops/rescan': 'admin',
  'GET /api/v1/retargets': 'admin',
  'GET /api/v1/retargets/:id': 'admin',
  'GET /api/v1/retargets/:id/changes': 'admin',
  'POST /api/v1/retargets': 'admin',
  'POST /api/v1/retargets/:id/undo': 'admin',
  'POST /api/v1/retargets/:id/approve': 'admin',
  'POST /api/v1/retargets/:id/pause': 'admin',
  'POST /api/v1/retargets/:id/resume': 'admin',
  'POST /api/v1/retargets/:id/cancel': 'admin',
  'POST /api/v1/wordpress/breaker/:id/approve': 'admin',
  'POST /api/v1/wordpress/breaker/:id/discard': 'admin',
  'GET /api/v1/wordpress/breaker': 'admin',
  'GET /api/v1/wordpress/reviews': 'admin',
  'GET /api/v1/wordpress/sites': 'admin',
  'POST /api/v1/wordpress/reviews/:id/resolve': 'admin',
  // API: authenticated by their own means (HMAC signatures), or public
  'POST /api/v1/hooks/wordpress': 'public',
  'POST /api/v1/hooks/wordpress/backfill': 'public',
  'GET /api/v1/openapi.json': 'public',

  // UI: signing in and out
  'GET /ui': 'public',
  'GET /ui/login': 'public',
  'POST /ui/login': 'public',
  'GET /ui/login/mfa': 'public',
  'POST /ui/login/mfa': 'public',
  'GET /ui/login/oidc': 'public',
  'GET /ui/login/oidc/callback': 'public',
  'POST /ui/logout': 'public',
  // UI: one's own account
  'GET /ui/settings': 'signed-in',
  'POST /ui/settings': 'signed-in',
  'GET /ui/account/security': 'signed-in',
  'POST /ui/account/mfa/start': 'signed-in',
  'POST /ui/account/mfa/confirm': 'signed-in',
  'POST /ui/account/mfa/recovery-codes': 'signed-in',
  'POST /ui/account/sessions/:id/revoke': 'signed-in',
  'POST /ui/account/sessions/revoke-others': 'signed-in',
  // UI: links
  'GET /ui/links': 'links:read',
  'GET /ui/links/new': 'links:write',
  'POST /ui/links/new': 'links:write',
  'GET /ui/links/:code': 'links:read',
  'POST /ui/links/:code/edit': 'links:write',
  'POST /ui/links/:code/delete': 'links:write',
  'GET /ui/links/:code/qr.png': 'links:read',
  'GET /ui/links/:code/qr.svg': 'links:read',
  'GET /ui/links.csv': 'links:read',
  'GET /ui/links/:code/clicks.csv': 'links:read',
  'GET /ui/api/check': 'links:write',
  'GET /ui/destinations': 'links:read',
  'POST /ui/destinations/:code/retarget': 'links:write',
  // UI: moderation
  'GET /ui/reports': 'moderation',
  'POST /ui/reports/:code': 'moderation',
  // UI: administration
  'GET /ui/ops': 'admin',
  'POST /ui/ops/keys': 'admin',
  'POST /ui/ops/keys/:id/revoke': 'admin',
  'GET /ui/ops/escrow/latest.tar': 'admin',
  'POST /ui/ops/escrow/export': 'admin',
  'POST /ui/ops/escrow/snapshot': 'admin',
  'POST /ui/ops/front': 'admin',
  'POST /ui/ops/front/dns-changed': 'admin',
  'POST /ui/ops/reconcile': 'admin',
  'POST /ui/ops/rescan': 'admin',
  'POST /ui/ops/users': 'admin',
  'POST /ui/ops/users/:id/disable': 'admin',
  'POST /ui/ops/users/:id/enable': 'admin',
  'POST /ui/ops/users/:id/password': 'admin',
  'POST /ui/ops/users/:id/role': 'admin',
  'POST /ui/ops/users/:id/sessions/revoke': 'admin',
  'POST /ui/ops/users/:id/mfa/reset': 'admin',
  'GET /ui/ops/retarget': 'admin',
  'GET /ui/ops/retarget/:id': 'admin',
  'POST /ui/ops/retarget': 'admin',
  'POST /ui/ops/retarget/:id/approve': 'admin',
  'POST /ui/ops/retarget/:id/pause': 'admin',
  'POST /ui/ops/retarget/:id/resume': 'admin',
  'POST /ui/ops/retarget/:id/cancel': 'admin',
  'POST /ui/ops/retarget/:id/undo': 'admin',
  'POST /ui/ops/wordpress/breaker/:id/approve': 'admin',
  'POST /ui/ops/wordpress/breaker/:id/discard': 'admin',
  'GET /ui/ops/wordpress': 'admin',
  'POST /ui/ops/wordpress/reviews/:id/resolve': 'admin',
};

/** The rule of a registered route, or undefined when the table has none (the middleware then refuses). */
export function findRouteRule(method: string, path: string): RouteRule | undefined {
  return ROUTE_RULES[`${method === 'HEAD' ? 'GET' : method} ${path}`];
}
