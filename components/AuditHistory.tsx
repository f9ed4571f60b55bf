import type { I18n } from '../lib/i18n/translator.ts';
import { LINK_ORIGINS, LINK_STATUSES, SAFETY_VERDICTS } from '../lib/links/link.ts';
import type { LinkHistoryEntry as AuditRow } from '../lib/links/link_history.ts';
import { DisplayUrl } from './DisplayUrl.tsx';
import { DirIcon, useI18n } from './I18n.tsx';
import { getLinkFieldLabels } from './link_fields.ts';
import { UtmParams } from './UtmFields.tsx';

const ACTIONS = [
  'link.created',
  'link.minted',
  'link.retargeted',
  'link.status_changed',
  'link.updated',
  'link.deleted',
  'link.expired',
  'link.safety_changed',
] as const;
type KnownAction = (typeof ACTIONS)[number];
const isKnownAction = (a: string): a is KnownAction => (ACTIONS as readonly string[]).includes(a);

/** "user:ana@news.example" → "ana@news.example"; "apikey:3" → "API key #3". */
export function describeActor(i18n: Pick<I18n, 't'>, actor: string): string {
  const [kind, ...rest] = actor.split(':');
  const who = rest.join(':');
  switch (kind) {
    case 'user':
      return who;
    case 'apikey':
      return i18n.t('actor.apikey', { id: who });
    case 'wordpress':
      return i18n.t('actor.wordpress', { site: who });
    case 'system':
      return i18n.t('actor.system', { what: who });
    default:
      return actor;
  }
}

/** A value of the history for people: statuses and verdicts in words, URLs and text isolated. */
function Value(props: { field: string; value: unknown }) {
  const { t } = useI18n();
  const v = props.value;
  if (v === null || v === undefined || (Array.isArray(v) && v.length === 0)) return <>—</>;
  // Routing rules (ADR 0080), in order: what each matches, and where it sends.
  if (props.field === 'rules' && Array.isArray(v)) {
    return (
      <ol class="rules-history">
        {(v as { kind: 'language' | 'device' | 'country'; values: string[]; target: string }[]).map(
          (rule, i) => (
            <li key={`${i}`}>
              {t(`rules.kind.${rule.kind}`)}: <bdi dir="ltr">{rule.values.join(', ')}</bdi>{' '}
              <DirIcon glyph="→" /> <DisplayUrl url={rule.target} class="url-break" />
            </li>
          ),
        )}
      </ol>
    );
  }
  if (Array.isArray(v)) return <bdi dir="auto">{v.join(t('common.listSeparator'))}</bdi>;
  if (typeof v === 'object') {
    // A link's own UTM values ({ campaign, source, medium }), as the parameters the redirect appends.
    if (props.field === 'utm') return <UtmParams utm={v as Record<string, unknown>} />;
    return <bdi dir="ltr">{JSON.stringify(v)}</bdi>;
  }
  const text = String(v);
  if (props.field === 'status' && (LINK_STATUSES as readonly string[]).includes(text)) {
    return <>{t(`status.${text as (typeof LINK_STATUSES)[number]}`)}</>;
  }
  if (props.field === 'safety' && (SAFETY_VERDICTS as readonly string[]).includes(text)) {
    return <>{t(`safety.${text as (typeof SAFETY_VERDICTS)[number]}`)}</>;
  }
  if (props.field === 'origin' && (LINK_ORIGINS as readonly string[]).includes(text)) {
    return <>{t(`origin.${text as (typeof LINK_ORIGINS)[number]}`)}</>;
  }
  if (props.field === 'url' || props.field === 'expiredUrl')
    return <DisplayUrl url={text} class="url-break" />;
  return <bdi dir="auto">{text}</bdi>;
}

/** A link's history, newest first: who did what, from what to what, and why. */
export function AuditHistory(props: { entries: AuditRow[]; timeZone: string }) {
  const i18n = useI18n();
  const { t } = i18n;
  const labels = getLinkFieldLabels(i18n);
  const fieldLabel = (f: string) =>
    labels[f] ?? (f === 'safety' ? t('field.safety') : f === 'origin' ? t('field.origin') : f);
  if (props.entries.length === 0) return <p class="muted">{t('history.empty')}</p>;
  return (
    <ol class="timeline">
      {props.entries.map((e) => {
        const before = (e.before ?? {}) as Record<string, unknown>;
        const after = (e.after ?? {}) as Record<string, unknown>;
        const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
          (f) => f !== 'batch',
        );
        return (
          <li key={e.id} class="timeline-item">
            <div class="timeline-head">
              <strong>{isKnownAction(e.action) ? t(`history.action.${e.action}`) : e.action}</strong>
              <span class="muted">
                {i18n.rich('history.by', { actor: <bdi dir="auto">{describeActor(i18n, e.actor)}</bdi> })} ·{' '}
                <time datetime={e.createdAt.toISOString()}>{i18n.dateTime(e.createdAt)}</time>
              </span>
            </div>
            {fields.length > 0 && (
              <dl class="diff">
                {fields.map((f) => (
                  <div key={f} class="diff-row">
                    <dt>{fieldLabel(f)}</dt>
                    <dd>
                      {f in before && (
                        <>
                          <del>
                            <Value field={f} value={before[f]} />
                          </del>{' '}
                          <DirIcon glyph="→" />
                          <span class="visually-hidden"> {t('history.changedTo')} </span>{' '}
                        </>
                      )}
                      <ins>
                        <Value field={f} value={after[f]} />
                      </ins>
                    </dd>
                  </div>
                ))}
              </dl>
            )}
            {e.reason && (
              <p class="reason" dir="auto">
                {t('history.reason', { reason: e.reason })}
              </p>
            )}
          </li>
        );
      })}
    </ol>
  );
}
