import type { LinkHistoryEntry as AuditRow } from '../lib/links/link_history.ts';
import { formatDateTime } from '../lib/ui/time_zone.ts';

const ACTIONS: Record<string, string> = {
  'link.created': 'Created',
  'link.minted': 'Minted at publish',
  'link.retargeted': 'Destination changed',
  'link.status_changed': 'Status changed',
  'link.updated': 'Settings changed',
  'link.deleted': 'Deleted',
  'link.expired': 'Expired',
  'link.safety_changed': 'Safety verdict changed',
};

/** "user:ana@news.example" → "ana@news.example"; "apikey:3" → "API key #3". */
export function describeActor(actor: string): string {
  const [kind, ...rest] = actor.split(':');
  const who = rest.join(':');
  switch (kind) {
    case 'user':
      return who;
    case 'apikey':
      return `API key #${who}`;
    case 'wordpress':
      return `WordPress (${who})`;
    case 'system':
      return `Lifeline (${who})`;
    default:
      return actor;
  }
}

const show = (v: unknown): string =>
  v === null || v === undefined
    ? '—'
    : Array.isArray(v)
      ? v.join(', ') || '—'
      : typeof v === 'object'
        ? Object.entries(v as Record<string, unknown>)
            .map(([k, x]) => `${k}=${show(x)}`)
            .join(' · ') || '—'
        : String(v);

/** A link's history, newest first: who did what, from what to what, and why. */
export function AuditHistory(props: { entries: AuditRow[]; timeZone: string }) {
  if (props.entries.length === 0) return <p class="muted">No history yet.</p>;
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
              <strong>{ACTIONS[e.action] ?? e.action}</strong>
              <span class="muted">
                by {describeActor(e.actor)} ·{' '}
                <time datetime={e.createdAt.toISOString()}>
                  {formatDateTime(e.createdAt, props.timeZone)}
                </time>
              </span>
            </div>
            {fields.length > 0 && (
              <dl class="diff">
                {fields.map((f) => (
                  <div key={f} class="diff-row">
                    <dt>{f}</dt>
                    <dd>
                      {f in before && (
                        <>
                          <del>{show(before[f])}</del>
                          <span aria-hidden="true"> → </span>
                          <span class="visually-hidden"> changed to </span>
                        </>
                      )}
                      <ins>{show(after[f])}</ins>
                    </dd>
                  </div>
                ))}
              </dl>
            )}
            {e.reason && <p class="reason">“{e.reason}”</p>}
          </li>
        );
      })}
    </ol>
  );
}
