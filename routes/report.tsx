import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { renderToString } from 'preact-render-to-string';
import { PublicPage } from '../components/PublicPage.tsx';
import { isPossibleCode } from '../lib/codes/code_rules.ts';
import { isHttpsBase, publicPageHeaders } from '../lib/redirect/public_headers.ts';
import { hostNameOf } from '../lib/redirect/short_domain_hosts.ts';
import { reportInputSchema, reportLink } from '../lib/safety/report_link.ts';
import { getClientIp } from '../lib/shared/client_ip.ts';
import {
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
} from '../lib/shared/errors.ts';
import { linkKey, shortBaseUrlOf, storedDomainOf } from '../lib/shared/link_key.ts';
import {
  findNulCharacter,
  nulCharacterError,
  parseJsonText,
  toFieldErrors,
} from '../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from './app_env.ts';

/** A report body is a short reason: anything larger is refused before it is read. */
const REPORT_BODY_MAX_BYTES = 4096;

/** POST /{code}/report: a reader reports a link (form from the warn/preview page, or JSON `{ reason }`). */
export function createReportRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  const pageHeaders = publicPageHeaders(isHttpsBase(deps.config.shortBaseUrl));
  const ownOrigins = new Set([
    new URL(deps.config.shortBaseUrl).origin,
    new URL(deps.config.appBaseUrl).origin,
    // The other short domains' preview pages post their reports to their own host (ADR 0078).
    ...deps.config.shortDomains.slice(1).map((domain) => shortBaseUrlOf(deps.config, domain)),
  ]);
  app.post(
    '/:code/report',
    bodyLimit({
      maxSize: REPORT_BODY_MAX_BYTES,
      onError: () => {
        throw new PayloadTooLargeError(`The request body is larger than ${REPORT_BODY_MAX_BYTES} bytes.`);
      },
    }),
    async (c) => {
      const code = c.req.param('code');
      if (!isPossibleCode(code)) throw new NotFoundError(`No link ${code}.`);
      // A form post is a "simple" cross-site request: another site could make its visitors report a link
      // (three visitors would soft-block it). Browsers say where a post comes from; only our pages may.
      const origin = c.req.header('Origin');
      if (
        (origin !== undefined && !ownOrigins.has(origin)) ||
        c.req.header('Sec-Fetch-Site') === 'cross-site'
      ) {
        throw new ForbiddenError("Reports are accepted from this site's own pages or from API clients.");
      }
      const clientIp = getClientIp(c, deps.config.trustedClientIpHeader);
      await deps.rateLimits.consumeReports(clientIp);
      const { reason, fromForm } = await readReport(c);
      // The link the reader saw: the code on the short domain this Host names (the default for an unknown Host
      // unless SHORT_DOMAIN_UNKNOWN_HOST=not_found, as for the redirect).
      const stored = storedDomainOf(deps.config, hostNameOf(c.req.header('Host') ?? ''));
      if (stored === undefined && deps.config.unknownHost === 'not_found') {
        throw new NotFoundError(`No link ${code}.`);
      }
      const outcome = await reportLink(deps, { code: linkKey(stored ?? '', code), clientIp, reason });
      c.header('Cache-Control', 'no-store');
      c.header('X-Robots-Tag', 'noindex');
      for (const [name, value] of Object.entries(pageHeaders)) c.header(name, value);
      if (fromForm) {
        const page = (
          <PublicPage title="Thank you">
            <h1>Thank you</h1>
            <p>Your report was received. We review links that readers report.</p>
          </PublicPage>
        );
        return c.html(`<!doctype html>${renderToString(page)}`, 202);
      }
      return c.json({ code, accepted: true, counted: outcome.counted }, 202);
    },
  );
  return app;
}

/** The reason from a JSON or form body; anything else is a 400 problem. */
async function readReport(c: Context<AppEnv>): Promise<{ reason: string; fromForm: boolean }> {
  const type = (c.req.header('Content-Type') ?? '').toLowerCase();
  let value: unknown;
  let fromForm = false;
  if (/^application\/([\w.+-]+\+)?json\s*(;|$)/.test(type)) {
    value = parseJsonText(await c.req.text());
  } else if (type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data')) {
    fromForm = true;
    try {
      value = { ...(await c.req.parseBody()) };
    } catch {
      throw new BadRequestError('The form body could not be read.');
    }
    const nul = findNulCharacter(value);
    if (nul !== null) throw nulCharacterError(nul);
  } else {
    throw new BadRequestError('Send a form or a JSON body { "reason": "..." }.');
  }
  const parsed = reportInputSchema.safeParse(value);
  if (!parsed.success) throw new BadRequestError('The report is not valid.', toFieldErrors(parsed.error));
  return { reason: parsed.data.reason, fromForm };
}
