import LiveField from '../islands/LiveField.tsx';
import type { UiSession } from '../lib/auth/sessions.ts';
import { describeTimeZone } from '../lib/ui/time_zone.ts';
import { AppLayout } from './AppLayout.tsx';
import { CsrfField, ErrorSummary, SelectField, TextField } from './Field.tsx';
import { Island } from './Island.tsx';
import { UTM_FIELD_LABELS, UtmFields } from './UtmFields.tsx';

export const LINK_FIELD_LABELS: Record<string, string> = {
  url: 'Destination URL',
  alias: 'Custom alias',
  tags: 'Tags',
  expiresAt: 'Expires at',
  expiredUrl: 'After expiry, send readers to',
  redirectStatus: 'Redirect type',
  status: 'Status',
  reason: 'Reason',
  form: 'Form',
  ...UTM_FIELD_LABELS,
};

export const REDIRECT_OPTIONS = [
  { value: '', label: 'Default of this deployment' },
  { value: '301', label: '301 — permanent (cached by browsers)' },
  { value: '302', label: '302 — temporary' },
  { value: '307', label: '307 — temporary, keeps the method' },
  { value: '308', label: '308 — permanent, keeps the method' },
];

/** The create form: URL and alias checked as you type; expiry, fallback and tags; errors next to fields. */
export function NewLinkPage(props: {
  session: UiSession;
  values: Record<string, string>;
  errors: Record<string, string>;
  shortBase: string;
  timeZone: string;
  /** UTM_PARAMS, shown beside the link's own UTM fields. */
  deploymentUtm?: string | undefined;
}) {
  const { values, errors } = props;
  return (
    <AppLayout title="New link" session={props.session} section="new">
      <div class="page-header">
        <div>
          <p class="breadcrumb">
            <a href="/ui/links">Links</a> /
          </p>
          <h1>New short link</h1>
        </div>
      </div>
      <form method="post" action="/ui/links/new" class="card form-card stack" novalidate>
        <CsrfField token={props.session.csrfToken} />
        <ErrorSummary errors={errors} labels={LINK_FIELD_LABELS} />
        <Island
          name="LiveField"
          component={LiveField}
          props={{
            check: 'url',
            name: 'url',
            label: 'Destination URL',
            value: values.url ?? '',
            required: true,
            placeholder: 'https://www.example-news.com/2026/story',
            hint: 'Where readers should land. http or https.',
            ...(errors.url ? { error: errors.url } : {}),
          }}
        />
        <Island
          name="LiveField"
          component={LiveField}
          props={{
            check: 'alias',
            name: 'alias',
            label: 'Custom alias',
            value: values.alias ?? '',
            prefix: `${props.shortBase.replace(/^https?:\/\//, '')}/`,
            placeholder: 'spring-sale',
            hint: 'Leave empty for a short random code. Letters, digits, "-" and "_"; at least 3. Case matters.',
            ...(errors.alias ? { error: errors.alias } : {}),
          }}
        />
        <TextField
          name="tags"
          label="Tags"
          value={values.tags}
          error={errors.tags}
          placeholder="politics, election-2026"
          hint="Separate tags with commas. Tags help you find links later."
        />
        <fieldset class="fieldset">
          <legend>Expiry</legend>
          <div class="grid-2">
            <TextField
              name="expiresAt"
              label="Expires at"
              type="datetime-local"
              value={values.expiresAt}
              error={errors.expiresAt}
              hint={`Your time zone: ${describeTimeZone(props.timeZone)}.`}
            />
            <TextField
              name="expiredUrl"
              label="After expiry, send readers to"
              type="url"
              value={values.expiredUrl}
              error={errors.expiredUrl}
              placeholder="https://www.example-news.com/"
              hint="Without one, an expired link shows a “link expired” page."
            />
          </div>
        </fieldset>
        <details
          class="advanced"
          open={Boolean(errors.redirectStatus || errors.utmCampaign || errors.utmSource || errors.utmMedium)}
        >
          <summary>Advanced</summary>
          <UtmFields values={values} errors={errors} deploymentUtm={props.deploymentUtm} />
          <SelectField
            name="redirectStatus"
            label="Redirect type"
            value={values.redirectStatus}
            error={errors.redirectStatus}
            options={REDIRECT_OPTIONS}
          />
        </details>
        <div class="form-actions">
          <button type="submit" class="btn btn-primary">
            Create short link
          </button>
          <a class="btn btn-ghost" href="/ui/links">
            Cancel
          </a>
        </div>
      </form>
    </AppLayout>
  );
}
