import { Fragment } from 'preact';
import { UTM_FORM_FIELDS } from '../lib/ui/link_form.ts';
import { TextField } from './Field.tsx';
import { useI18n } from './I18n.tsx';
import { getLinkFieldLabels } from './link_fields.ts';

/**
 * Examples of a source and a medium. They stay in English in every language: GA4's default channel groups
 * recognise mediums and sources by these English values ("email", "newsletter"…), so they are what an
 * editor should type whatever the page's language.
 */
const EXAMPLES = { utmSource: 'newsletter', utmMedium: 'email' } as const;

/**
 * The link's own UTM parameters, for the create and edit forms. `deploymentUtm` is UTM_PARAMS, shown so an
 * editor knows what is added anyway and that these values win over it.
 */
export function UtmFields(props: {
  values: Record<string, string | undefined>;
  errors: Record<string, string | undefined>;
  deploymentUtm?: string | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { values, errors } = props;
  const labels = getLinkFieldLabels(i18n);
  return (
    <fieldset class="fieldset">
      <legend>{t('field.utm')}</legend>
      <p class="hint">
        {t('utm.hint')}
        {props.deploymentUtm && (
          <>
            {' '}
            {i18n.rich('utm.deploymentAdds', {
              params: (
                <code dir="ltr" class="url-break">
                  {props.deploymentUtm}
                </code>
              ),
            })}
          </>
        )}
      </p>
      <div class="grid-3">
        {UTM_FORM_FIELDS.map(([name]) => (
          <TextField
            key={name}
            name={name}
            label={labels[name]!}
            value={values[name]}
            error={errors[name]}
            maxLength={100}
            dir="auto"
            placeholder={name === 'utmCampaign' ? t('utm.campaignExample') : EXAMPLES[name]}
          />
        ))}
      </div>
    </fieldset>
  );
}

/**
 * A link's own UTM values as the parameters the redirect appends ("utm_campaign=انتخابات · utm_medium=push"):
 * each pair laid out left to right, as in a URL.
 */
export function UtmParams(props: { utm: Record<string, unknown> }) {
  const pairs = Object.entries(props.utm).filter(([, v]) => v !== null && v !== undefined && v !== '');
  if (pairs.length === 0) return <>—</>;
  return (
    <>
      {pairs.map(([k, v], i) => (
        <Fragment key={k}>
          {i > 0 && ' · '}
          <bdi dir="ltr" class="utm-param">
            utm_{k}={String(v)}
          </bdi>
        </Fragment>
      ))}
    </>
  );
}
