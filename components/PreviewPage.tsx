import type { SafetyVerdict } from '../lib/links/link.ts';
import type { LinkPreview } from '../lib/redirect/preview.ts';

import { PublicPage } from './PublicPage.tsx';
import { ReportForm } from './ReportForm.tsx';

const SAFETY_TEXT: Record<SafetyVerdict, string> = {
  clean: 'No problems found',
  unknown: 'Not checked yet',
  warn: 'Readers are warned before continuing',
  blocked: 'Blocked as unsafe',
};

/** The preview page of a short link (no redirect, no click counted). */
export function PreviewPage(props: { preview: LinkPreview }) {
  const p = props.preview;
  return (
    <PublicPage title={`Preview of ${p.shortUrl}`}>
      <h1>Where this link leads</h1>
      <p class="destination">
        <span class="label">Short link</span> <code>{p.shortUrl}</code>
      </p>
      <dl class="facts">
        <div>
          <dt>Destination</dt>
          <dd class="url-break">
            {p.destination !== undefined ? <code>{p.destination}</code> : 'None (this link leads nowhere)'}
          </dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>{p.status}</dd>
        </div>
        <div>
          <dt>Safety</dt>
          <dd>
            {p.safety}: {SAFETY_TEXT[p.safety]}
          </dd>
        </div>
        <div>
          <dt>Following it</dt>
          <dd>{p.outcome}</dd>
        </div>
      </dl>
      {p.status === 'active' && p.safety !== 'blocked' && (
        <p>
          <a class="button" href={`/${p.code}`} rel="nofollow">
            Follow the short link
          </a>
        </p>
      )}
      {p.status === 'active' && p.safety !== 'blocked' && <ReportForm code={p.code} />}
    </PublicPage>
  );
}
