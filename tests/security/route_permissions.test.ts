// Every registered route of the API and the UI against the one permission table (routes/route_rules.ts), for
// each role (UI sessions) and each scope set (API keys), and for nobody. A route added without a rule fails here
// (and is refused by the middleware); a rule left for a route that is gone fails too. The API's documented
// scopes (OpenAPI, ADR 0062) must be the table's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { issueApiKey } from '../../lib/auth/issue_api_key.ts';
import { createUser } from '../../lib/auth/manage_users.ts';
import { type Permission, ROLE_PERMISSIONS, USER_ROLES, type UserRole } from '../../lib/auth/permissions.ts';
import { startSession } from '../../lib/auth/sessions.ts';
import { createI18n } from '../../lib/i18n/translator.ts';
import { API_OPERATIONS } from '../../routes/api/openapi.ts';
import { createApp } from '../../routes/app.ts';
import { ROUTE_RULES, type RouteRule } from '../../routes/route_rules.ts';

const { t } = createI18n('en');
const FORBIDDEN_PAGE = t('error.forbidden.message');
const CSRF_PAGE = t('error.csrf.message');
/** Parameters no seeded row has: an allowed request reaches its handler and meets a 404 or a 422, not a refusal. */
const PARAMS: Record<string, string> = {
  code: 'nosuchcode9',
  id: '987654',
  site: 'perm.example',
  postId: '424242',
  host: 'perm-host.example',
};
/** API keys that hold exactly what each role holds. */
const ROLE_SCOPES: Record<UserRole, string[]> = {
  viewer: ['links:read'],
  editor: ['links:read', 'links:write'],
  moderator: ['links:read', 'links:write', 'moderation'],
  admin: ['admin'],
};

let h: Harness;
const sessions = new Map<UserRole, { cookie: string; csrf: string }>();
const keys = new Map<UserRole, string>();
let routes: { method: string; path: string }[];

before(async () => {
  h = await createHarness({ env: { CREATE_RATE_PER_MINUTE: '100000' } });
  for (const role of USER_ROLES) {
    const { user } = await createUser(
      h.db.sql,
      { email: `perm-${role}@example.test`, name: null, role, password: 'a permissions test password' },
      'test',
    );
    const session = await startSession(h.db.sql, user, { userAgent: 'test', ip: '127.0.0.1' });
    sessions.set(role, { cookie: `lifeline_session=${session.id}`, csrf: session.csrfToken });
    const { key } = await issueApiKey(
      h.db.sql,
      { name: `perm ${role}`, scopes: ROLE_SCOPES[role] as never },
      'test',
    );
    keys.set(role, key);
  }
  const seen = new Set<string>();
  routes = [];
  for (const r of h.app.routes) {
    if (r.method === 'ALL' || !(r.path.startsWith('/api/v1') || r.path.startsWith('/ui'))) continue;
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    routes.push({ method: r.method, path: r.path });
  }
});
after(() => h?.close());

const fill = (path: string) => path.replace(/:(\w+)/g, (_, name: string) => PARAMS[name] ?? '1');
const allowed = (role: UserRole, rule: RouteRule) =>
  rule === 'public' || rule === 'signed-in' || ROLE_PERMISSIONS[role].includes(rule as Permission);

function uiRequest(method: string, path: string, as?: { cookie: string; csrf: string }) {
  const headers: Record<string, string> = { Origin: new URL(h.config.appBaseUrl).origin };
  if (as) headers.Cookie = as.cookie;
  if (method === 'GET') return h.app.request(fill(path), { headers });
  headers['Content-Type'] = 'application/x-www-form-urlencoded';
  const body = new URLSearchParams(as ? { _csrf: as.csrf } : {}).toString();
  return h.app.request(fill(path), { method, headers, body });
}

function apiRequest(method: string, path: string, key?: string) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (key) headers.Authorization = `Bearer ${key}`;
  const body = method === 'GET' || method === 'DELETE' ? undefined : '{}';
  return h.app.request(fill(path), { method, headers, ...(body ? { body } : {}) });
}

/** Whether the answer is the authorize middleware's refusal (not a handler's own 403 or 404). */
async function refusedByRule(res: Response): Promise<boolean> {
  if (res.status !== 403) return false;
  const text = await res.clone().text();
  return text.includes(FORBIDDEN_PAGE) || text.includes('lacks the') || text.includes('No permission rule');
}

describe('route permissions', () => {
  test('every registered API and UI route has a rule, and every rule a route', () => {
    const registered = new Set(routes.map((r) => `${r.method} ${r.path}`));
    const missing = [...registered].filter((k) => !(k in ROUTE_RULES));
    assert.deepEqual(missing, [], 'routes without a rule in routes/route_rules.ts');
    const stale = Object.keys(ROUTE_RULES).filter((k) => !registered.has(k));
    assert.deepEqual(stale, [], 'rules for routes that do not exist');
  });

  test("the API's documented scopes are the table's permissions", () => {
    for (const op of API_OPERATIONS) {
      const path = `/api/v1${op.path.replace(/\{(\w+)\}/g, ':$1')}`;
      const rule = ROUTE_RULES[`${op.method.toUpperCase()} ${path}`];
      assert.equal(op.scope ?? 'public', rule, `${op.method} ${path}`);
    }
  });

  test('API: each scope set gets exactly its routes (403 otherwise); no key is a 401', async () => {
    const api = routes.filter((r) => r.path.startsWith('/api/v1'));
    for (const route of api) {
      const rule = ROUTE_RULES[`${route.method} ${route.path}`]!;
      const anonymous = await apiRequest(route.method, route.path);
      // Public routes authenticate by their own means (the webhooks' signatures answer 401 themselves).
      if (rule === 'public') assert.ok(!(await refusedByRule(anonymous)), `${route.method} ${route.path}`);
      else assert.equal(anonymous.status, 401, `${route.method} ${route.path} without a key`);
      for (const role of USER_ROLES) {
        const res = await apiRequest(route.method, route.path, keys.get(role));
        const label = `${route.method} ${route.path} with ${role}'s scopes → ${res.status}`;
        if (!allowed(role, rule)) assert.ok(await refusedByRule(res), label);
        else if (rule === 'public') assert.ok(!(await refusedByRule(res)), label);
        else assert.ok(!(await refusedByRule(res)) && res.status !== 401, label);
      }
    }
  });

  test('UI: each role gets exactly its pages and actions (a 403 page otherwise); nobody is sent to sign in', async () => {
    const ui = routes.filter((r) => r.path.startsWith('/ui'));
    for (const route of ui) {
      const rule = ROUTE_RULES[`${route.method} ${route.path}`]!;
      const anonymous = await uiRequest(route.method, route.path);
      if (rule !== 'public') {
        const location = anonymous.headers.get('Location') ?? '';
        const toLogin = anonymous.status === 303 && location.startsWith('/ui/login');
        const apiJson = route.path.startsWith('/ui/api/') && anonymous.status === 401;
        // A form post without a session has no session token to carry: the CSRF check refuses it first.
        const csrf = anonymous.status === 403 && (await anonymous.clone().text()).includes(CSRF_PAGE);
        assert.ok(
          toLogin || apiJson || csrf,
          `${route.method} ${route.path} signed out → ${anonymous.status} ${location}`,
        );
      }
      // Signing out would end the session the next routes are asked with; it is public, asked signed out above.
      if (route.path === '/ui/logout') continue;
      for (const role of USER_ROLES) {
        const res = await uiRequest(route.method, route.path, sessions.get(role));
        const label = `${route.method} ${route.path} as ${role} → ${res.status}`;
        if (allowed(role, rule)) {
          assert.ok(!(await refusedByRule(res)), label);
          assert.ok(!(res.headers.get('Location') ?? '').startsWith('/ui/login?next'), label);
        } else assert.ok(await refusedByRule(res), label);
      }
    }
  });

  test('a route added without a rule is refused, for the API and the UI alike', async () => {
    // A second app on the same dependencies, with a route the table does not know (added before any request).
    const app = createApp(h.deps);
    app.get('/api/v1/links-unruled-probe', (c) => c.json({ leaked: true }));
    app.get('/ui/unruled-probe', (c) => c.text('leaked'));
    const api = await app.request('/api/v1/links-unruled-probe', {
      headers: { Authorization: `Bearer ${keys.get('admin')}` },
    });
    assert.equal(api.status, 403);
    assert.match(await api.text(), /No permission rule/);
    const page = await app.request('/ui/unruled-probe', {
      headers: { Cookie: sessions.get('admin')!.cookie },
    });
    assert.equal(page.status, 403);
    assert.ok((await page.text()).includes(FORBIDDEN_PAGE));
  });
});
