import { Hono } from 'hono';
import { type LinkFilters, LinksPage } from '../../components/LinksPage.tsx';
import { countBulkSelection } from '../../lib/links/bulk_change.ts';
import { toUiLink } from '../../lib/links/link.ts';
import { linkListQuerySchema, listLinkPage, toLinkListFilter } from '../../lib/links/list_links.ts';
import { listOwnReportedLinks } from '../../lib/safety/moderate_reports.ts';
import { BadRequestError } from '../../lib/shared/errors.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import { toFieldMap } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const FILTER_KEYS = ['q', 'status', 'safety', 'origin', 'tag', 'site', 'domain', 'sort'] as const;
/** Codes are short; anything longer in `?deleted=` is not ours to echo. */
const CODE_ECHO_MAX = 64;
/** The list counts the links its filters match up to this many (one more says "more"): a cheap count per page. */
export const LIST_MATCH_CAP = 10_000;

/** GET /ui/links: search, filter, sort and page through links (the same query rules as the API). */
export function createLinkListRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  app.get('/', async (c) => {
    const session = c.get('session')!;
    const raw = c.req.query();
    const filters = Object.fromEntries(FILTER_KEYS.map((k) => [k, raw[k] ?? ''])) as unknown as LinkFilters;
    filters.sort ||= 'newest';
    const deleted = raw.deleted?.slice(0, CODE_ECHO_MAX);
    // An editor is told here when readers reported links of theirs, unless a deletion is confirmed.
    const reported = deleted ? [] : await listOwnReportedLinks(deps.sql, `user:${session.user.id}`);
    const notice = deleted
      ? c.get('i18n').t('links.deleted', { code: deleted })
      : reported.length > 0
        ? c.get('i18n').t('reports.ownList', {
            codes: `${reported
              .slice(0, 5)
              .map((r) => `${r.code} (${r.openReports})`)
              .join(', ')}${reported.length > 5 ? ', …' : ''}`,
          })
        : undefined;
    const parsed = linkListQuerySchema.safeParse({
      ...filters,
      ...(raw.cursor ? { cursor: raw.cursor } : {}),
    });
    const render = (
      page: {
        items: ReturnType<typeof toUiLink>[];
        nextCursor: string | null;
        prevCursor: string | null;
        clicks?: Map<string, number>;
        matching?: number;
      },
      errors?: Record<string, string>,
      status: 200 | 422 = 200,
    ) =>
      renderPage(
        c,
        <LinksPage
          session={session}
          filters={filters}
          {...page}
          timeZone={c.get('timeZone')}
          notice={notice}
          noticeTone={deleted ? 'good' : 'warn'}
          shortDomains={deps.config.shortDomains}
          {...(errors ? { errors } : {})}
        />,
        status,
      );
    if (!parsed.success) {
      return render(
        { items: [], nextCursor: null, prevCursor: null },
        toFieldMap(toFieldErrors(parsed.error)),
        422,
      );
    }
    try {
      const page = await listLinkPage(deps.sql, parsed.data, deps.config);
      // The bulk bar's "all matching" count, only when there is something to select.
      const matching =
        page.items.length > 0
          ? await countBulkSelection(
              deps.sql,
              { filter: toLinkListFilter(parsed.data, deps.config) },
              LIST_MATCH_CAP + 1,
            )
          : undefined;
      return render({
        items: page.items.map((row) => toUiLink(row, deps.config, page.vendors.get(row.code))),
        nextCursor: page.nextCursor,
        prevCursor: page.prevCursor,
        clicks: page.clicks,
        ...(matching !== undefined ? { matching } : {}),
      });
    } catch (error) {
      if (error instanceof BadRequestError) {
        return render({ items: [], nextCursor: null, prevCursor: null }, toFieldMap(error.extra.errors), 422);
      }
      throw error;
    }
  });

  return app;
}
