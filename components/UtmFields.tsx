import { TextField } from './Field.tsx';

/** Labels of the UTM form fields (error summaries name fields by these). */
export const UTM_FIELD_LABELS: Record<string, string> = {
  utmCampaign: 'Campaign (utm_campaign)',
  utmSource: 'Source (utm_source)',
  utmMedium: 'Medium (utm_medium)',
};

/**
 * The link's own UTM parameters, for the create and edit forms. `deploymentUtm` is UTM_PARAMS, shown so an
 * editor knows what is added anyway and that these values win over it.
 */
export function UtmFields(props: {
  values: Record<string, string | undefined>;
  errors: Record<string, string | undefined>;
  deploymentUtm?: string | undefined;
}) {
  const { values, errors } = props;
  return (
    <fieldset class="fieldset">
      <legend>Campaign tracking (UTM)</legend>
      <p class="hint">
        Added to the destination when a reader follows the link, so analytics (GA4) can tell where readers
        came from. A parameter already in the destination URL is never replaced.
        {props.deploymentUtm
          ? ` This deployment also adds ${props.deploymentUtm}; the values here win over it.`
          : ''}
      </p>
      <div class="grid-3">
        {(['utmCampaign', 'utmSource', 'utmMedium'] as const).map((name) => (
          <TextField
            key={name}
            name={name}
            label={UTM_FIELD_LABELS[name]!}
            value={values[name]}
            error={errors[name]}
            maxLength={100}
            placeholder={
              name === 'utmCampaign' ? 'election-night' : name === 'utmSource' ? 'newsletter' : 'email'
            }
          />
        ))}
      </div>
    </fieldset>
  );
}
