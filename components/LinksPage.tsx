import CopyButton from '../islands/CopyButton.tsx';
import SelectPage from '../islands/SelectPage.tsx';
import type { UiSession } from '../lib/auth/sessions.ts';
import { LINK_ORIGINS, LINK_STATUSES, type Link, SAFETY_VERDICTS } from '../lib/links/link.ts';
import { LINK_SORTS } from '../lib/links/list_links.ts';
import { keyCode } from '../lib/shared/link_key.ts';
import { AppLayout } from './AppLayout.tsx';
import { SafetyBadge, StatusBadge } from './Badge.tsx';
import { BULK_FILTER_KEYS, BULK_UI_ACTIONS, bulkFilterField } from './bulk_fields.ts';
import { DisplayUrl } from './DisplayUrl.tsx';
import { LinksCsvButton } from './ExportLinks.tsx';
import { CsrfField, Notice } from './Field.tsx';
import { DirIcon, useI18n } from './I18n.tsx';
import { Island } from './Island.tsx';

/** The list's filters as the form holds them (strings; empty means "any"). */
export interface LinkFilters {
  q: string;
  status: string;
  safety: string;
  origin: string;
  tag: string;
  site: string;
  /** A short domain's name ('' any; ADR 0078). */
  domain: string;
  sort: string;
}

/** `/ui/links` with these filters (and a cursor). */
export function linksHref(filters: Partial<LinkFilters>, cursor?: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v && !(k === 'sort' && v === 'newest')) params.set(k, v);
  if (cursor) params.set('cursor', cursor);
  const qs = params.toString();
  return `/ui/links${qs ? `?${qs}` : ''}`;
}

/** Above this many matches the bulk bar says "10,000+" (routes/ui/link_list.tsx counts one more). */
const LIST_MATCH_SHOWN_MAX = 10_000;

const withoutScheme = (url: string) => url.replace(/^https?:\/\//, '');
const isSort = (v: string): v is (typeof LINK_SORTS)[number] => (LINK_SORTS as readonly string[]).includes(v);

function FilterSelect(props: { name: string; label: string; value: string; options: [string, string][] }) {
  return (
    <div class="field field-compact">
      <label for={`filter-${props.name}`}>{props.label}</label>
      <select id={`filter-${props.name}`} name={props.name}>
        {props.options.map(([value, text]) => (
          <option key={value} value={value} selected={value === props.value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The links list: search, filters, sort, a page of links, and paging both ways. */
export function LinksPage(props: {
  session: UiSession;
  filters: LinkFilters;
  items: Link[];
  nextCursor: string | null;
  prevCursor: string | null;
  timeZone: string;
  errors?: Record<string, string>;
  notice?: string | undefined;
  noticeTone?: 'good' | 'warn' | undefined;
  /** SHORT_DOMAINS, the default first: with more than one, the list filters by domain. */
  shortDomains?: readonly string[];
  /** How many links the filters match (the bulk bar's "all matching" option), counted up to a cap. */
  matching?: number | undefined;
  /** Total clicks per listed code (human and QR). */
  clicks?: Map<string, number> | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { filters } = props;
  const filtered = ['q', 'status', 'safety', 'origin', 'tag', 'site', 'domain'].some(
    (k) => filters[k as keyof LinkFilters],
  );
  const copyLabels = { label: t('copy.copy'), copiedLabel: t('copy.copied') };
  return (
    <AppLayout title={t('links.title')} session={props.session} section="links">
      <div class="page-header">
        <div>
          <h1>{t('links.title')}</h1>
          <p class="muted">{t('links.lead')}</p>
        </div>
        <div class="header-actions">
          <LinksCsvButton filters={{ ...filters }} />
          <a class="btn btn-secondary" href="/ui/links/import">
            {t('import.open')}
          </a>
          <a class="btn btn-primary" href="/ui/links/new">
            <span aria-hidden="true">+</span> {t('links.new')}
          </a>
        </div>
      </div>

      {props.notice && <Notice tone={props.noticeTone ?? 'good'} title={props.notice} />}

      <search aria-label={t('links.searchRegion')}>
        <form method="get" action="/ui/links" class="card filters">
          <div class="field field-search">
            <label for="filter-q">{t('links.search')}</label>
            <input
              id="filter-q"
              name="q"
              type="search"
              dir="auto"
              value={filters.q}
              placeholder={t('links.searchPlaceholder')}
              maxLength={200}
            />
          </div>
          <div class="filter-actions">
            <button type="submit" class="btn btn-primary">
              {t('links.searchButton')}
            </button>
            {filtered && (
              <a class="btn btn-ghost" href="/ui/links">
                {t('links.clear')}
              </a>
            )}
          </div>
          {(props.shortDomains?.length ?? 0) > 1 ? (
            <FilterSelect
              name="domain"
              label={t('field.domain')}
              value={filters.domain}
              options={[
                ['', t('links.filter.anyDomain')],
                ...(props.shortDomains ?? []).map((d): [string, string] => [d, `\u2068${d}\u2069`]),
              ]}
            />
          ) : null}
          <FilterSelect
            name="status"
            label={t('links.filter.status')}
            value={filters.status}
            options={[
              ['', t('links.filter.anyStatus')],
              ...LINK_STATUSES.map((s): [string, string] => [s, t(`status.${s}`)]),
            ]}
          />
          <FilterSelect
            name="safety"
            label={t('links.filter.safety')}
            value={filters.safety}
            options={[
              ['', t('links.filter.anyVerdict')],
              ...SAFETY_VERDICTS.map((s): [string, string] => [s, t(`safety.${s}`)]),
            ]}
          />
          <FilterSelect
            name="origin"
            label={t('links.filter.origin')}
            value={filters.origin}
            options={[
              ['', t('links.filter.anywhere')],
              ...LINK_ORIGINS.map((s): [string, string] => [s, t(`origin.${s}`)]),
            ]}
          />
          <div class="field field-compact">
            <label for="filter-tag">{t('links.filter.tag')}</label>
            <input
              id="filter-tag"
              name="tag"
              type="text"
              dir="auto"
              value={filters.tag}
              maxLength={64}
              placeholder={t('links.filter.tagPlaceholder')}
            />
          </div>
          <div class="field field-compact">
            <label for="filter-site">{t('links.filter.site')}</label>
            <input
              id="filter-site"
              name="site"
              type="text"
              value={filters.site}
              maxLength={100}
              placeholder={t('links.filter.sitePlaceholder')}
            />
          </div>
          <FilterSelect
            name="sort"
            label={t('links.filter.sort')}
            value={filters.sort}
            options={LINK_SORTS.map((s): [string, string] => [s, t(`links.sort.${s}`)])}
          />
        </form>
      </search>

      {props.errors && Object.keys(props.errors).length > 0 && (
        <Notice tone="bad" title={t('links.filtersNotUnderstood')}>
          <ul>
            {Object.entries(props.errors).map(([k, v]) => (
              <li key={k}>{i18n.fieldSentence(fieldLabel(i18n, k), v)}</li>
            ))}
          </ul>
        </Notice>
      )}

      {props.items.length === 0 ? (
        <div class="card empty">
          {filtered ? (
            <>
              <h2>{t('links.noMatch')}</h2>
              <p class="muted">{t('links.noMatchHint')}</p>
              <a class="btn btn-secondary" href="/ui/links">
                {t('links.clearFilters')}
              </a>
            </>
          ) : (
            <>
              <h2>{t('links.empty')}</h2>
              <p class="muted">{t('links.emptyHint')}</p>
              <a class="btn btn-primary" href="/ui/links/new">
                {t('links.createFirst')}
              </a>
            </>
          )}
        </div>
      ) : (
        <>
          <form id="bulk-form" method="post" action="/ui/links/bulk" class="card bulk-bar">
            <CsrfField token={props.session.csrfToken} />
            <input type="hidden" name="step" value="review" />
            {BULK_FILTER_KEYS.map((k) =>
              filters[k] ? (
                <input key={k} type="hidden" name={bulkFilterField(k)} value={filters[k]} />
              ) : null,
            )}
            <span class="bulk-bar-title">{t('bulk.bar')}</span>
            {props.matching !== undefined && (
              <label class="check">
                <input type="checkbox" name="all" value="1" />{' '}
                {t('bulk.allMatching', {
                  count: props.matching,
                  shown:
                    props.matching > LIST_MATCH_SHOWN_MAX
                      ? `${i18n.number(LIST_MATCH_SHOWN_MAX)}+`
                      : i18n.number(props.matching),
                })}
              </label>
            )}
            <label class="visually-hidden" for="bulk-action">
              {t('bulk.action')}
            </label>
            <select id="bulk-action" name="action">
              <option value="">{t('bulk.chooseAction')}</option>
              {BULK_UI_ACTIONS.map((a) => (
                <option key={a} value={a}>
                  {t(`bulk.action.${a}`)}
                </option>
              ))}
            </select>
            <button type="submit" class="btn btn-secondary">
              {t('bulk.review')}
            </button>
          </form>
          <div class="card table-card">
            <table class="links-table">
              <caption class="visually-hidden">
                {t('links.caption', {
                  sort: t(`links.sort.${isSort(filters.sort) ? filters.sort : 'newest'}`),
                })}
              </caption>
              <thead>
                <tr>
                  <th scope="col">
                    <span class="visually-hidden">{t('bulk.select')}</span>
                    <Island
                      name="SelectPage"
                      component={SelectPage}
                      props={{ formId: 'bulk-form', label: t('bulk.selectPage') }}
                    />
                  </th>
                  <th scope="col">{t('links.col.shortLink')}</th>
                  <th scope="col">{t('links.col.destination')}</th>
                  <th scope="col">{t('links.col.status')}</th>
                  <th scope="col">{t('links.col.safety')}</th>
                  <th scope="col">{t('links.col.tags')}</th>
                  <th scope="col" class="num">
                    {t('links.col.clicks')}
                  </th>
                  <th scope="col">{t('links.col.created')}</th>
                </tr>
              </thead>
              <tbody>
                {props.items.map((link) => (
                  <tr key={link.code}>
                    <td class="select-cell">
                      <input
                        type="checkbox"
                        name="code"
                        value={link.code}
                        form="bulk-form"
                        aria-label={t('bulk.selectLink', { code: link.code })}
                      />
                    </td>
                    <td data-label={t('links.col.shortLink')}>
                      <div class="short-cell">
                        <a class="code-link" dir="ltr" href={`/ui/links/${encodeURIComponent(link.code)}`}>
                          <span class="code-host">
                            {withoutScheme(link.shortUrl).slice(0, -keyCode(link.code).length)}
                          </span>
                          {keyCode(link.code)}
                        </a>
                        <Island
                          name="CopyButton"
                          component={CopyButton}
                          props={{ text: link.shortUrl, ...copyLabels }}
                        />
                      </div>
                    </td>
                    <td data-label={t('links.col.destination')} class="destination-cell">
                      {link.title && (
                        <span class="link-title">
                          <bdi dir="auto">{link.title}</bdi>
                        </span>
                      )}
                      <DisplayUrl url={link.url} bare />
                    </td>
                    <td data-label={t('links.col.status')}>
                      <StatusBadge status={link.status} />
                    </td>
                    <td data-label={t('links.col.safety')}>
                      <SafetyBadge safety={link.safety} />
                    </td>
                    <td data-label={t('links.col.tags')}>
                      <span class="tags">
                        {link.tags.length === 0 ? (
                          <span class="muted">—</span>
                        ) : (
                          link.tags.map((tag) => (
                            <a key={tag} class="tag" dir="auto" href={linksHref({ ...filters, tag })}>
                              {tag}
                            </a>
                          ))
                        )}
                      </span>
                    </td>
                    <td data-label={t('links.col.clicks')} class="num clicks-cell">
                      {i18n.number(props.clicks?.get(link.code) ?? 0)}
                    </td>
                    <td data-label={t('links.col.created')} class="nowrap">
                      <time datetime={link.createdAt}>{i18n.date(new Date(link.createdAt))}</time>
                      <span class="muted small">
                        {i18n.time(new Date(link.createdAt))} · {t(`origin.${link.origin}`)}
                      </span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {(props.prevCursor || props.nextCursor) && (
        <nav class="pagination" aria-label={t('links.pages')}>
          {props.prevCursor ? (
            <a class="btn btn-secondary" href={linksHref(filters, props.prevCursor)} rel="prev">
              <DirIcon glyph="←" /> {t('links.previous')}
            </a>
          ) : (
            <span />
          )}
          {props.nextCursor ? (
            <a class="btn btn-secondary" href={linksHref(filters, props.nextCursor)} rel="next">
              {t('links.next')} <DirIcon glyph="→" />
            </a>
          ) : (
            <span />
          )}
        </nav>
      )}
    </AppLayout>
  );
}

/** The label of a list filter, for its error. */
function fieldLabel(i18n: ReturnType<typeof useI18n>, name: string): string {
  const known = [
    'q',
    'status',
    'safety',
    'origin',
    'tag',
    'site',
    'domain',
    'sort',
    'cursor',
    'limit',
  ] as const;
  const found = known.find((k) => k === name);
  return found ? i18n.t(`field.${found}`) : name;
}
