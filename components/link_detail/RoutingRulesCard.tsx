// The routing rules of a link (ADR 0080): one form, a fieldset per rule and one blank row for a new rule. Moving
// and removing are submit buttons, so the editor works without JavaScript; every submit saves.
import type { Link } from '../../lib/links/link.ts';
import { ROUTING_DEVICES, ROUTING_RULE_KINDS, ROUTING_RULES_MAX } from '../../lib/links/routing_rules.ts';
import type { RuleRow } from '../../lib/ui/rules_form.ts';
import { CsrfField, ErrorSummary, SelectField, TextField } from '../Field.tsx';
import { useI18n } from '../I18n.tsx';

/** The rules card; `locked`: a WordPress article's link and a viewer who is no administrator (shown, not editable). */
export function RoutingRulesCard(props: {
  link: Link;
  version: number;
  csrfToken: string;
  rules: { rows: RuleRow[]; errors: Record<string, string> };
  locked: boolean;
}) {
  const { t } = useI18n();
  const { link, locked } = props;
  const { rows, errors } = props.rules;
  const kinds = ROUTING_RULE_KINDS.map((kind) => ({ value: kind, label: t(`rules.kind.${kind}`) }));
  // The blank row adds a rule; none once the link has as many as it may.
  const shown: RuleRow[] =
    rows.length < ROUTING_RULES_MAX ? [...rows, { kind: 'language', values: '', target: '' }] : rows;
  return (
    <section class="card" aria-labelledby="rules-title" id="rules">
      <h2 id="rules-title">{t('rules.title')}</h2>
      <p class="muted">{t('rules.lead')}</p>
      <form
        method="post"
        action={`/ui/links/${encodeURIComponent(link.code)}/rules`}
        class="stack"
        novalidate
      >
        <CsrfField token={props.csrfToken} />
        <input type="hidden" name="version" value={String(props.version)} />
        {/* First in the form, so Enter in a field saves rather than pressing a row's move or remove button. */}
        {!locked && (
          <button
            type="submit"
            name="op"
            value="save"
            class="visually-hidden"
            tabIndex={-1}
            aria-hidden="true"
          >
            {t('rules.save')}
          </button>
        )}
        <ErrorSummary errors={errors} />
        {locked && <p class="hint">{t('detail.postLocked')}</p>}
        {rows.length === 0 && <p class="small">{t('rules.none')}</p>}
        {rows.length >= ROUTING_RULES_MAX && (
          <p class="hint">{t('rules.full', { max: ROUTING_RULES_MAX })}</p>
        )}
        {shown.map((row, i) => {
          const isNew = i === rows.length;
          const n = i + 1;
          return (
            <fieldset class="stack rule-row" key={`rule-${i}`} data-rule={isNew ? 'new' : String(i)}>
              <legend>{isNew ? t('rules.newRule') : t('rules.rule', { n })}</legend>
              <div class="grid-2">
                <SelectField
                  name={`rules.${i}.kind`}
                  label={t('rules.kind')}
                  value={row.kind}
                  options={kinds}
                  error={errors[`rules.${i}.kind`]}
                  disabled={locked}
                  required
                />
                <TextField
                  name={`rules.${i}.values`}
                  label={t('rules.values')}
                  value={row.values}
                  error={errors[`rules.${i}.values`]}
                  hint={
                    i === 0
                      ? t('rules.valuesHint', {
                          languages: 'ar, en',
                          devices: ROUTING_DEVICES.join(', '),
                          countries: 'EG, SA',
                        })
                      : undefined
                  }
                  dir="ltr"
                  disabled={locked}
                  required={!isNew}
                />
              </div>
              <TextField
                name={`rules.${i}.target`}
                label={t('rules.target')}
                type="url"
                value={row.target}
                error={errors[`rules.${i}.target`]}
                dir="ltr"
                disabled={locked}
                required={!isNew}
              />
              {!isNew && !locked && (
                <div class="actions-row">
                  {i > 0 && (
                    <button type="submit" name="op" value={`up:${i}`} class="btn btn-ghost btn-sm">
                      {t('rules.up', { n })}
                    </button>
                  )}
                  {i + 1 < rows.length && (
                    <button type="submit" name="op" value={`down:${i}`} class="btn btn-ghost btn-sm">
                      {t('rules.down', { n })}
                    </button>
                  )}
                  <button type="submit" name="op" value={`remove:${i}`} class="btn btn-danger-ghost btn-sm">
                    {t('rules.remove', { n })}
                  </button>
                </div>
              )}
            </fieldset>
          );
        })}
        {!locked && (
          <div>
            <button type="submit" name="op" value="save" class="btn btn-primary">
              {t('rules.save')}
            </button>
          </div>
        )}
      </form>
    </section>
  );
}
