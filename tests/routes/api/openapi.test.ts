import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { z } from 'zod';
import { createHarness, type Harness } from '../../../devkit/harness/harness.ts';
import { signWebhook } from '../../../lib/auth/webhook_signature.ts';
import { buildOpenApiDocument } from '../../../routes/api/openapi/build_document.ts';
import { describeRoute, named } from '../../../routes/api/openapi/describe_route.ts';
import { API_OPERATIONS } from '../../../routes/api/openapi.ts';

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
      }
    >
  >;
};

let h: Harness;
let doc: Doc;
before(async () => {
  h = await createHarness();
  await h.startWorker();
  const res = await h.app.request('/api/v1/openapi.json');
  assert.equal(res.status, 200);
  doc = (await res.json()) as Doc;
});
after(async () => {
  await h.close();
});

/** Hono's `/api/v1/links/:code` (or `:code{pattern}`) → OpenAPI's `/links/{code}`, under the server URL. */
const toOpenApiPath = (path: string) => path.slice('/api/v1'.length).replace(/:(\w+)(\{[^}]*\})?/g, '{$1}');
const sorted = (items: Iterable<string>) => [...new Set(items)].sort();

describe('GET /api/v1/openapi.json', () => {
  test('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(doc.openapi, '3.1.0');
  });

  test('every /api/v1 route of the app is described, and every described operation is a route', () => {
    // Middleware (app.use) is registered as ALL; a handler has its method.
    const served = sorted(
      h.app.routes
        .filter((r) => r.method !== 'ALL' && r.path.startsWith('/api/v1/'))
        .map((r) => `${r.method} ${toOpenApiPath(r.path)}`),
    );
    const described = sorted(API_OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.path}`));
    const undescribed = served.filter((route) => !described.includes(route));
    const unserved = described.filter((op) => !served.includes(op));
    assert.deepEqual(
      undescribed,
      [],
      `served but not described beside its handler: ${undescribed.join(', ')}`,
    );
    assert.deepEqual(unserved, [], `described but not served: ${unserved.join(', ')}`);
    assert.equal(described.length, API_OPERATIONS.length, 'one description per method and path');
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    assert.deepEqual(sorted(documented), described, 'the served document is the described operations');
  });

  test('a component name stands for one schema', () => {
    const answer = (schema: z.ZodType, operationId: string) =>
      describeRoute({
        method: 'get',
        path: `/${operationId}`,
        operationId,
        summary: operationId,
        scope: null,
        responses: { 200: { description: 'ok', schema: named('Thing', schema) } },
      });
    assert.throws(
      () => buildOpenApiDocument([answer(z.string(), 'a'), answer(z.number(), 'b')], 'http://x'),
      /b gives the name Thing to another schema/,
    );
  });

  test('every operation answers as documented: a documented status, and a body matching its schema', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'openapi.json');
    const auth = { Authorization: `Bearer ${h.apiKey}` };
    const json = { ...auth, 'Content-Type': 'application/json' };
    const created = (await (
      await h.api('/api/v1/links', {
        method: 'POST',
        json: { url: 'https://example.com/doc', site: 'doc', postId: 1 },
      })
    ).json()) as { code: string };
    const doomed = (await (
      await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://example.com/doomed' } })
    ).json()) as {
      code: string;
    };
    const key = (await (
      await h.api('/api/v1/keys', { method: 'POST', json: { name: 'doc', scopes: ['links:read'] } })
    ).json()) as { id: number };
    const event = JSON.stringify({
      id: `doc-${Date.now()}`,
      event: 'post.published',
      site: 'doc-site',
      postId: 9,
      permalink: 'https://example.com/wp/9',
      occurredAt: new Date().toISOString(),
    });
    const retarget = (await (
      await h.api('/api/v1/retargets', {
        method: 'POST',
        json: { rule: { type: 'prefix', from: 'https://nothing.example/', to: 'https://else.example/' } },
      })
    ).json()) as { id: string };
    const batch = JSON.stringify({
      id: 'doc-run:1',
      run: '2f0c6c1e-8a8e-4a51-9b4e-0d3c2f1e7a10',
      site: 'doc-site',
      batch: 1,
      dryRun: true,
      final: true,
      total: 1,
      restUrl: 'https://example.com/wp-json/lifeline/v1/',
      posts: [
        {
          postId: 7,
          permalink: 'https://example.com/wp/7',
          publishedAt: '2020-01-01T00:00:00Z',
          modifiedAt: '2020-01-01T00:00:00Z',
        },
      ],
    });
    const hook = (await (
      await h.api('/api/v1/webhooks', {
        method: 'POST',
        json: { url: 'https://hooks.example.com/doc', eventTypes: ['link.created'] },
      })
    ).json()) as { id: number };
    const doomedHook = (await (
      await h.api('/api/v1/webhooks', {
        method: 'POST',
        json: { url: 'https://hooks.example.com/doomed', eventTypes: ['link.deleted'] },
      })
    ).json()) as { id: number };
    await h.api('/api/v1/links', { method: 'POST', json: { url: 'https://example.com/doc-hooked' } });
    const [message] = await h.db.sql<{ id: string }[]>`
      SELECT id FROM webhook_messages WHERE endpoint_id = ${hook.id} LIMIT 1`;
    const bulk = (await (
      await h.api('/api/v1/links/bulk', {
        method: 'POST',
        json: { action: 'tag_add', tag: 'doc-bulk', codes: [created.code] },
      })
    ).json()) as { id: string };
    const steer = (action: string, id = retarget.id) =>
      h.app.request(`/api/v1/retargets/${id}/${action}`, { method: 'POST', headers: auth });
    // One real call per operation (and some of their documented failures).
    const calls: Record<string, () => (Response | Promise<Response>)[]> = {
      createLink: () => [
        h.app.request('/api/v1/links', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ url: 'https://example.com/doc-2' }),
        }),
        h.app.request('/api/v1/links', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ url: 'nope' }),
        }),
        h.app.request('/api/v1/links', { method: 'POST', body: '{}' }),
      ],
      createLinksBatch: () => [
        h.app.request('/api/v1/links/batch', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ links: [{ url: 'https://example.com/doc-3' }, { url: 'bad' }] }),
        }),
        h.app.request('/api/v1/links/batch', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ links: [] }),
        }),
      ],
      listLinks: () => [
        h.app.request('/api/v1/links?limit=2', { headers: auth }),
        h.app.request('/api/v1/links?status=zzz', { headers: auth }),
      ],
      getLinkByPost: () => [
        h.app.request('/api/v1/links/by-post/doc/1', { headers: auth }),
        h.app.request('/api/v1/links/by-post/doc/2', { headers: auth }),
      ],
      getLink: () => [
        h.app.request(`/api/v1/links/${created.code}`, { headers: auth }),
        h.app.request('/api/v1/links/unknown-x', { headers: auth }),
        h.app.request(`/api/v1/links/${created.code}?domain=not-ours.example`, { headers: auth }),
      ],
      updateLink: () => [
        h.app.request(`/api/v1/links/${created.code}`, {
          method: 'PATCH',
          headers: json,
          body: JSON.stringify({ tags: ['doc'] }),
        }),
        h.app.request(`/api/v1/links/${created.code}`, {
          method: 'PATCH',
          headers: json,
          body: JSON.stringify({ url: 1 }),
        }),
      ],
      deleteLink: () => [h.app.request(`/api/v1/links/${doomed.code}`, { method: 'DELETE', headers: auth })],
      requestBulkChange: () => [
        h.app.request('/api/v1/links/bulk', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ action: 'tag_remove', tag: 'doc-bulk', filter: { tag: 'doc-bulk' } }),
        }),
        h.app.request('/api/v1/links/bulk', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ action: 'block', codes: [created.code] }),
        }),
      ],
      getBulkChange: () => [
        h.app.request(`/api/v1/links/bulk/${bulk.id}`, { headers: auth }),
        h.app.request('/api/v1/links/bulk/bk_none', { headers: auth }),
      ],
      exportLinksCsv: () => [
        h.app.request('/api/v1/links.csv?sort=oldest', { headers: auth }),
        h.app.request('/api/v1/links.csv?status=zzz', { headers: auth }),
        h.app.request('/api/v1/links.csv'),
      ],
      exportLinkClicksCsv: () => [
        h.app.request(`/api/v1/links/${created.code}/clicks.csv?by=country`, { headers: auth }),
        h.app.request(`/api/v1/links/${created.code}/clicks.csv?by=week`, { headers: auth }),
        h.app.request('/api/v1/links/unknown-x/clicks.csv', { headers: auth }),
      ],
      getLinkQrCode: () => [
        h.app.request(`/api/v1/links/${created.code}/qr?format=png&size=256`, { headers: auth }),
        h.app.request(`/api/v1/links/${created.code}/qr?format=pdf&fg=%23777777`, { headers: auth }),
        h.app.request('/api/v1/links/unknown-x/qr', { headers: auth }),
      ],
      getLinkStats: () => [
        h.app.request(`/api/v1/links/${created.code}/stats`, { headers: auth }),
        h.app.request(`/api/v1/links/${created.code}/stats?from=x`, { headers: auth }),
      ],
      createApiKey: () => [
        h.app.request('/api/v1/keys', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ name: 'k', scopes: ['admin'] }),
        }),
      ],
      listApiKeys: () => [h.app.request('/api/v1/keys', { headers: auth })],
      revokeApiKey: () => [h.app.request(`/api/v1/keys/${key.id}`, { method: 'DELETE', headers: auth })],
      receiveWordPressEvent: () => [
        (async () =>
          h.app.request('/api/v1/hooks/wordpress', {
            method: 'POST',
            headers: {
              'Content-Type': 'application/json',
              'X-Lifeline-Signature': await signWebhook(h.webhookSecret, event, Date.now() / 1000),
            },
            body: event,
          }))(),
        h.app.request('/api/v1/hooks/wordpress', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: event,
        }),
      ],
      getOpenApiDocument: () => [h.app.request('/api/v1/openapi.json')],
      receiveBackfillBatch: () => [
        (async () =>
          h.app.request('/api/v1/hooks/wordpress/backfill', {
            method: 'POST',
            headers: {
              'Content-Type': 'application/json',
              'X-Lifeline-Signature': await signWebhook(h.webhookSecret, batch, Date.now() / 1000),
            },
            body: batch,
          }))(),
        h.app.request('/api/v1/hooks/wordpress/backfill', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: batch,
        }),
      ],
      requestRetarget: () => [
        h.app.request('/api/v1/retargets', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ rule: { type: 'regex', pattern: '(a)\\1', replacement: 'x' } }),
        }),
      ],
      listRetargets: () => [h.app.request('/api/v1/retargets', { headers: auth })],
      getRetarget: () => [
        h.app.request(`/api/v1/retargets/${retarget.id}`, { headers: auth }),
        h.app.request('/api/v1/retargets/rt_none', { headers: auth }),
      ],
      listRetargetChanges: () => [
        h.app.request(`/api/v1/retargets/${retarget.id}/changes?limit=5`, { headers: auth }),
        h.app.request(`/api/v1/retargets/${retarget.id}/changes?state=zzz`, { headers: auth }),
      ],
      approveRetarget: () => [steer('approve', 'rt_none')],
      pauseRetarget: () => [steer('pause')],
      resumeRetarget: () => [steer('resume')],
      cancelRetarget: () => [steer('cancel')],
      undoRetarget: () => [steer('undo', 'rt_none')],
      checkSafety: () => [
        h.app.request('/api/v1/safety/check', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ url: 'https://example.com/check' }),
        }),
        h.app.request('/api/v1/safety/check', { method: 'POST', headers: json, body: '{"url":"ftp://x"}' }),
      ],
      listBlocklist: () => [h.app.request('/api/v1/blocklist?limit=5', { headers: auth })],
      addBlocklistEntry: () => [
        h.app.request('/api/v1/blocklist', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ pattern: 'doc.example', reason: 'docs' }),
        }),
        h.app.request('/api/v1/blocklist', { method: 'POST', headers: json, body: '{"pattern":"a b"}' }),
      ],
      removeBlocklistEntry: () => [
        h.app.request('/api/v1/blocklist?pattern=doc.example', { method: 'DELETE', headers: auth }),
        h.app.request('/api/v1/blocklist?pattern=never.example', { method: 'DELETE', headers: auth }),
      ],
      startRescan: () => [h.app.request('/api/v1/ops/rescan', { method: 'POST', headers: auth })],
      startReconcile: () => [
        h.app.request('/api/v1/ops/reconcile', { method: 'POST', headers: json, body: '{"repair":false}' }),
        h.app.request('/api/v1/ops/reconcile', { method: 'POST', headers: json, body: '{"repair":"yes"}' }),
      ],
      listOpsRuns: () => [h.app.request('/api/v1/ops/runs?kind=rescan', { headers: auth })],
      getActiveFront: () => [h.app.request('/api/v1/ops/front', { headers: auth })],
      startFailover: () => [
        h.app.request('/api/v1/ops/failover', {
          method: 'POST',
          headers: json,
          body: '{"to":"inhouse","drill":true}',
        }),
        h.app.request('/api/v1/ops/failover', { method: 'POST', headers: json, body: '{"to":"nowhere"}' }),
      ],
      listReportQueue: () => [
        h.app.request('/api/v1/reports', { headers: auth }),
        h.app.request('/api/v1/reports?status=nope', { headers: auth }),
      ],
      listDestinations: () => [
        h.app.request('/api/v1/destinations?state=dead', { headers: auth }),
        h.app.request('/api/v1/destinations?state=zombie', { headers: auth }),
      ],
      setDestinationPolicy: () => [
        h.app.request(`/api/v1/destinations/${created.code}/policy`, {
          method: 'POST',
          headers: json,
          body: '{"policy":"notify"}',
        }),
        h.app.request('/api/v1/destinations/unknown-x/policy', {
          method: 'POST',
          headers: json,
          body: '{"policy":"notify"}',
        }),
        h.app.request(`/api/v1/destinations/${created.code}/policy`, {
          method: 'POST',
          headers: json,
          body: '{"policy":"archive"}',
        }),
      ],
      applyDestinationRetarget: () => [
        h.app.request(`/api/v1/destinations/${created.code}/retarget`, { method: 'POST', headers: auth }),
      ],
      setDestinationHostPolicy: () => [
        h.app.request('/api/v1/destinations/hosts/elsewhere.example/policy', {
          method: 'POST',
          headers: json,
          body: '{"policy":"fallback"}',
        }),
        h.app.request('/api/v1/destinations/hosts/elsewhere.example/policy', {
          method: 'POST',
          headers: json,
          body: '{"policy":"sometimes"}',
        }),
      ],
      getLinkReports: () => [
        h.app.request(`/api/v1/reports/${created.code}`, { headers: auth }),
        h.app.request('/api/v1/reports/unknown-x', { headers: auth }),
      ],
      resolveReports: () => [
        h.app.request(`/api/v1/reports/${created.code}/resolve`, {
          method: 'POST',
          headers: json,
          body: '{"action":"ignore"}',
        }),
        h.app.request(`/api/v1/reports/${created.code}/resolve`, {
          method: 'POST',
          headers: json,
          body: '{"action":"shrug"}',
        }),
      ],
      listWordPressSites: () => [h.app.request('/api/v1/wordpress/sites', { headers: auth })],
      getWordPressSiteDomain: () => [
        h.app.request('/api/v1/wordpress/sites/doc-site/domain', { headers: auth }),
        h.app.request('/api/v1/wordpress/sites/bad%20site/domain', { headers: auth }),
      ],
      setWordPressSiteDomain: () => [
        h.app.request('/api/v1/wordpress/sites/doc-site/domain', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ domain: new URL(h.config.shortBaseUrl).hostname }),
        }),
        h.app.request('/api/v1/wordpress/sites/doc-site/domain', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ domain: 'not-ours.example' }),
        }),
      ],
      listWordPressReviews: () => [
        h.app.request('/api/v1/wordpress/reviews?site=news', { headers: auth }),
        h.app.request('/api/v1/wordpress/reviews?status=nope', { headers: auth }),
      ],
      resolveWordPressReview: () => [
        h.app.request('/api/v1/wordpress/reviews/999999/resolve', {
          method: 'POST',
          headers: json,
          body: '{"action":"keep"}',
        }),
        h.app.request('/api/v1/wordpress/reviews/999999/resolve', {
          method: 'POST',
          headers: json,
          body: '{"action":"shrug"}',
        }),
      ],
      listBreakerHolds: () => [h.app.request('/api/v1/wordpress/breaker?status=waiting', { headers: auth })],
      approveBreakerHold: () => [
        h.app.request('/api/v1/wordpress/breaker/999999/approve', { method: 'POST', headers: auth }),
      ],
      discardBreakerHold: () => [
        h.app.request('/api/v1/wordpress/breaker/999999/discard', { method: 'POST', headers: auth }),
      ],
      createWebhookEndpoint: () => [
        h.app.request('/api/v1/webhooks', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ url: 'https://hooks.example.com/doc-2', eventTypes: ['clicks.daily'] }),
        }),
        h.app.request('/api/v1/webhooks', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ url: 'https://10.9.8.7/private', eventTypes: ['link.created'] }),
        }),
      ],
      listWebhookEndpoints: () => [h.app.request('/api/v1/webhooks', { headers: auth })],
      getWebhookEndpoint: () => [
        h.app.request(`/api/v1/webhooks/${hook.id}`, { headers: auth }),
        h.app.request('/api/v1/webhooks/999999', { headers: auth }),
      ],
      updateWebhookEndpoint: () => [
        h.app.request(`/api/v1/webhooks/${hook.id}`, {
          method: 'PATCH',
          headers: json,
          body: JSON.stringify({ description: 'documented', eventTypes: ['link.created', 'link.updated'] }),
        }),
        h.app.request(`/api/v1/webhooks/${hook.id}`, {
          method: 'PATCH',
          headers: json,
          body: JSON.stringify({ eventTypes: ['link.nope'] }),
        }),
      ],
      deleteWebhookEndpoint: () => [
        h.app.request(`/api/v1/webhooks/${doomedHook.id}`, { method: 'DELETE', headers: auth }),
        h.app.request('/api/v1/webhooks/999999', { method: 'DELETE', headers: auth }),
      ],
      rotateWebhookSecret: () => [
        h.app.request(`/api/v1/webhooks/${hook.id}/rotate-secret`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ graceSeconds: 60 }),
        }),
        h.app.request(`/api/v1/webhooks/${hook.id}/rotate-secret`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ graceSeconds: -1 }),
        }),
      ],
      listWebhookDeliveries: () => [
        h.app.request(`/api/v1/webhooks/${hook.id}/deliveries?limit=5`, { headers: auth }),
        h.app.request(`/api/v1/webhooks/${hook.id}/deliveries?state=lost`, { headers: auth }),
      ],
      redeliverWebhook: () => [
        h.app.request(`/api/v1/webhooks/${hook.id}/deliveries/${message!.id}/redeliver`, {
          method: 'POST',
          headers: auth,
        }),
        h.app.request(`/api/v1/webhooks/${hook.id}/deliveries/msg_none/redeliver`, {
          method: 'POST',
          headers: auth,
        }),
      ],
      reportDnsChanged: () => [
        h.app.request('/api/v1/ops/front/dns-changed', { method: 'POST', headers: auth }),
      ],
    };
    const seen = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const make = calls[op.operationId];
        assert.ok(make, `no call for ${op.operationId}`);
        seen.add(op.operationId);
        for (const pending of make()) {
          const res = await pending;
          const documented = op.responses[String(res.status)];
          assert.ok(
            documented,
            `${method.toUpperCase()} ${path} answered ${res.status}, which is not documented`,
          );
          const content = documented.content;
          if (!content) continue;
          const types = Object.keys(content);
          if (
            types.some(
              (t) => t !== 'application/json' && t !== 'application/problem+json' && t !== 'text/csv',
            )
          ) {
            // A file (an image, a PDF): one of the documented types.
            const got = res.headers.get('Content-Type')?.split(';')[0] ?? '';
            assert.ok(types.includes(got), `${op.operationId} ${res.status}: ${got} is not one of ${types}`);
            await res.arrayBuffer();
            continue;
          }
          const [type, media] = Object.entries(content)[0]!;
          assert.equal(
            res.headers.get('Content-Type')?.split(';')[0],
            type,
            `${op.operationId} ${res.status}`,
          );
          if (type === 'text/csv') {
            const bytes = new Uint8Array(await res.arrayBuffer());
            assert.deepEqual(
              [...bytes.slice(0, 3)],
              [0xef, 0xbb, 0xbf],
              `${op.operationId}: a UTF-8 BOM first`,
            );
            continue;
          }
          const validate = ajv.getSchema(`openapi.json${media.schema.$ref}`)!;
          const body = await res.json();
          assert.ok(validate(body), `${op.operationId} ${res.status}: ${JSON.stringify(validate.errors)}`);
        }
      }
    }
    assert.deepEqual([...seen].sort(), API_OPERATIONS.map((o) => o.operationId).sort());
  });
});
