import CopyButton from '../islands/CopyButton.tsx';
import type { UiSession } from '../lib/auth/sessions.ts';
import { LINK_ORIGINS, LINK_STATUSES, type Link, SAFETY_VERDICTS } from '../lib/links/link.ts';
import { LINK_SORTS } from '../lib/links/list_links.ts';
import { formatDate, formatTime } from '../lib/ui/time_zone.ts';
import { AppLayout } from './AppLayout.tsx';
import { SAFETY_TEXT, SafetyBadge, STATUS_TEXT, StatusBadge } from './Badge.tsx';
import { LinksCsvButton } from './ExportLinks.tsx';
import { Notice } from './Field.tsx';
import { Island } from './Island.tsx';

/** The list's filters as the form holds them (strings; empty means "any"). */
export interface LinkFilters {
  q: string;
  status: string;
  safety: string;
  origin: string;
  tag: string;
  site: string;
  sort: string;
}

const SORT_TEXT: Record<(typeof LINK_SORTS)[number], string> = {
  newest: 'Newest first',
  oldest: 'Oldest first',
  updated: 'Recently edited',
  code: 'Code A–Z',
};
const ORIGIN_TEXT: Record<(typeof LINK_ORIGINS)[number], string> = {
  api: 'API',
  ui: 'Editor',
  wordpress: 'WordPress',
  import: 'Import',
};

/** `/ui/links` with these filters (and a cursor). */
export function linksHref(filters: Partial<LinkFilters>, cursor?: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v && !(k === 'sort' && v === 'newest')) params.set(k, v);
  if (cursor) params.set('cursor', cursor);
  const qs = params.toString();
  return `/ui/links${qs ? `?${qs}` : ''}`;
}

const withoutScheme = (url: string) => url.replace(/^https?:\/\//, '');

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
}) {
  const { filters } = props;
  const filtered = ['q', 'status', 'safety', 'origin', 'tag', 'site'].some(
    (k) => filters[k as keyof LinkFilters],
  );
  return (
    <AppLayout title="Links" session={props.session} section="links">
      <div class="page-header">
        <div>
          <h1>Links</h1>
          <p class="muted">Every short link your newsroom owns, wherever it was made.</p>
        </div>
        <div class="header-actions">
          <LinksCsvButton filters={{ ...filters }} />
          <a class="btn btn-primary" href="/ui/links/new">
            + New link
          </a>
        </div>
      </div>

      {props.notice && <Notice tone={props.noticeTone ?? 'good'} title={props.notice} />}

      <search aria-label="Search and filter links">
        <form method="get" action="/ui/links" class="card filters">
          <div class="field field-search">
            <label for="filter-q">Search</label>
            <input
              id="filter-q"
              name="q"
              type="search"
              value={filters.q}
              placeholder="Code, destination URL or tag"
              maxLength={200}
            />
          </div>
          <div class="filter-actions">
            <button type="submit" class="btn btn-primary">
              Search
            </button>
            {filtered && (
              <a class="btn btn-ghost" href="/ui/links">
                Clear
              </a>
            )}
          </div>
          <FilterSelect
            name="status"
            label="Status"
            value={filters.status}
            options={[['', 'Any status'], ...LINK_STATUSES.map((s): [string, string] => [s, STATUS_TEXT[s]])]}
          />
          <FilterSelect
            name="safety"
            label="Safety"
            value={filters.safety}
            options={[
              ['', 'Any verdict'],
              ...SAFETY_VERDICTS.map((s): [string, string] => [s, SAFETY_TEXT[s]]),
            ]}
          />
          <FilterSelect
            name="origin"
            label="Made in"
            value={filters.origin}
            options={[['', 'Anywhere'], ...LINK_ORIGINS.map((s): [string, string] => [s, ORIGIN_TEXT[s]])]}
          />
          <div class="field field-compact">
            <label for="filter-tag">Tag</label>
            <input
              id="filter-tag"
              name="tag"
              type="text"
              value={filters.tag}
              maxLength={64}
              placeholder="e.g. politics"
            />
          </div>
          <div class="field field-compact">
            <label for="filter-site">Site</label>
            <input
              id="filter-site"
              name="site"
              type="text"
              value={filters.site}
              maxLength={100}
              placeholder="e.g. news"
            />
          </div>
          <FilterSelect
            name="sort"
            label="Sort"
            value={filters.sort}
            options={LINK_SORTS.map((s): [string, string] => [s, SORT_TEXT[s]])}
          />
        </form>
      </search>

      {props.errors && Object.keys(props.errors).length > 0 && (
        <Notice tone="bad" title="Some filters were not understood">
          <ul>
            {Object.entries(props.errors).map(([k, v]) => (
              <li key={k}>
                {k}: {v}
              </li>
            ))}
          </ul>
        </Notice>
      )}

      {props.items.length === 0 ? (
        <div class="card empty">
          {filtered ? (
            <>
              <h2>No links match</h2>
              <p class="muted">Try fewer filters, or search for part of the destination URL.</p>
              <a class="btn btn-secondary" href="/ui/links">
                Clear filters
              </a>
            </>
          ) : (
            <>
              <h2>No links yet</h2>
              <p class="muted">
                Links appear here when you create them, or when WordPress publishes an article.
              </p>
              <a class="btn btn-primary" href="/ui/links/new">
                Create the first link
              </a>
            </>
          )}
        </div>
      ) : (
        <div class="card table-card">
          <table class="links-table">
            <caption class="visually-hidden">
              Links, {SORT_TEXT[filters.sort as 'newest'] ?? 'newest first'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Short link</th>
                <th scope="col">Destination</th>
                <th scope="col">Status</th>
                <th scope="col">Safety</th>
                <th scope="col">Tags</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {props.items.map((link) => (
                <tr key={link.code}>
                  <td data-label="Short link">
                    <div class="short-cell">
                      <a class="code-link" href={`/ui/links/${encodeURIComponent(link.code)}`}>
                        <span class="code-host">
                          {withoutScheme(link.shortUrl).slice(0, -link.code.length)}
                        </span>
                        {link.code}
                      </a>
                      <Island name="CopyButton" component={CopyButton} props={{ text: link.shortUrl }} />
                    </div>
                  </td>
                  <td data-label="Destination" class="destination-cell">
                    {link.title && <span class="link-title">{link.title}</span>}
                    <span class="url" title={link.url}>
                      {withoutScheme(link.url)}
                    </span>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={link.status} />
                  </td>
                  <td data-label="Safety">
                    <SafetyBadge safety={link.safety} />
                  </td>
                  <td data-label="Tags">
                    <span class="tags">
                      {link.tags.length === 0 ? (
                        <span class="muted">—</span>
                      ) : (
                        link.tags.map((t) => (
                          <a key={t} class="tag" href={linksHref({ ...filters, tag: t })}>
                            {t}
                          </a>
                        ))
                      )}
                    </span>
                  </td>
                  <td data-label="Created" class="nowrap">
                    <time datetime={link.createdAt}>
                      {formatDate(new Date(link.createdAt), props.timeZone)}
                    </time>
                    <span class="muted small">
                      {formatTime(new Date(link.createdAt), props.timeZone)} · {ORIGIN_TEXT[link.origin]}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(props.prevCursor || props.nextCursor) && (
        <nav class="pagination" aria-label="Pages">
          {props.prevCursor ? (
            <a class="btn btn-secondary" href={linksHref(filters, props.prevCursor)} rel="prev">
              ← Previous
            </a>
          ) : (
            <span />
          )}
          {props.nextCursor ? (
            <a class="btn btn-secondary" href={linksHref(filters, props.nextCursor)} rel="next">
              Next →
            </a>
          ) : (
            <span />
          )}
        </nav>
      )}
    </AppLayout>
  );
}
