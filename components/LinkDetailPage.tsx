// A link's page: composes its cards, each in components/link_detail/.
import type { UiSession } from '../lib/auth/sessions.ts';
import type { LinkStats } from '../lib/clicks/link_stats.ts';
import type { DestinationState } from '../lib/destinations/destination_state.ts';
import type { Link, StoredLink as LinkRow } from '../lib/links/link.ts';
import type { LinkHistoryEntry as AuditRow } from '../lib/links/link_history.ts';
import type { RuleRow } from '../lib/ui/rules_form.ts';
import { AppLayout } from './AppLayout.tsx';
import { AuditHistory } from './AuditHistory.tsx';
import { Notice } from './Field.tsx';
import { useI18n } from './I18n.tsx';
import { ClicksCard, type StatsWindow } from './link_detail/ClicksCard.tsx';
import { DeleteLinkCard } from './link_detail/DeleteLinkCard.tsx';
import { DestinationCard } from './link_detail/DestinationCard.tsx';
import { DestinationCheckCard } from './link_detail/DestinationCheckCard.tsx';
import { EditLinkCard } from './link_detail/EditLinkCard.tsx';
import { LinkHeader } from './link_detail/LinkHeader.tsx';
import { QrCard } from './link_detail/QrCard.tsx';
import { ReplicasCard } from './link_detail/ReplicasCard.tsx';
import { RoutingRulesCard } from './link_detail/RoutingRulesCard.tsx';
import { SafetyCard } from './link_detail/SafetyCard.tsx';
import { VendorComparison } from './VendorComparison.tsx';

/** Everything about one link: where it goes, its state everywhere, its clicks, its history; edit and delete. */
export function LinkDetailPage(props: {
  session: UiSession;
  link: Link;
  row: Pick<LinkRow, 'safetyReason' | 'safetyCheckedAt' | 'owner' | 'version'>;
  stats: LinkStats;
  days: number;
  statsWindow?: StatsWindow;
  audit: AuditRow[];
  temporal: { url: string | null; query: string };
  timeZone: string;
  notice?: { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string } | undefined;
  edit: { values: Record<string, string>; errors: Record<string, string> };
  /** The routing rules editor's rows (as stored, or as submitted with their errors). */
  rules: { rows: RuleRow[]; errors: Record<string, string> };
  deleteError?: string | undefined;
  /**
   * The link is a WordPress article's and the viewer is no administrator: the fields that decide where readers
   * land are shown disabled (lib/links/post_link_rules.ts).
   */
  postLocked?: boolean;
  /** Open reader reports of the link: its editors are told on its page. */
  readerReports?: { open: number; reasons: string[] } | undefined;
  /** UTM_PARAMS, shown beside the link's own UTM fields. */
  deploymentUtm?: string | undefined;
  /** What the last destination check saw; null: not checked yet. */
  destinationState?: DestinationState | null;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { link, stats, timeZone } = props;
  // The creation entry names a person; the owner column only holds an id.
  const creator =
    [...props.audit].reverse().find((e) => e.action === 'link.created' || e.action === 'link.minted')
      ?.actor ?? props.row.owner;
  return (
    <AppLayout title={link.title ?? link.code} session={props.session} section="links">
      <LinkHeader link={link} />

      {props.notice && (
        <Notice tone={props.notice.tone} title={props.notice.title}>
          {props.notice.text && <p>{props.notice.text}</p>}
        </Notice>
      )}
      {props.readerReports && props.readerReports.open > 0 && (
        <Notice tone="warn" title={t('reports.onLink.title', { n: props.readerReports.open })}>
          <p id="reader-reports">
            {props.readerReports.reasons.length > 0 &&
              `${t('reports.onLink.reasons', { reasons: props.readerReports.reasons.join('; ') })} `}
            {t('reports.onLink.text')}
            {props.session.user.role === 'admin' && (
              <>
                {' '}
                <a href="/ui/reports">{t('reports.onLink.queue')}</a>
              </>
            )}
          </p>
        </Notice>
      )}

      <div class="detail-grid">
        <div class="stack">
          <DestinationCard link={link} creator={creator} />
          <DestinationCheckCard state={props.destinationState ?? null} editorTitle={link.title ?? null} />

          <ClicksCard
            code={link.code}
            stats={stats}
            days={props.days}
            {...(props.statsWindow ? { window: props.statsWindow } : {})}
          />

          {stats.vendor && <VendorComparison comparison={stats.vendor} />}

          <EditLinkCard
            link={link}
            version={props.row.version}
            csrfToken={props.session.csrfToken}
            timeZone={timeZone}
            edit={props.edit}
            locked={props.postLocked === true}
            deploymentUtm={props.deploymentUtm}
          />

          <RoutingRulesCard
            link={link}
            version={props.row.version}
            csrfToken={props.session.csrfToken}
            rules={props.rules}
            locked={props.postLocked === true}
          />

          <section class="card" aria-labelledby="history-title">
            <h2 id="history-title">{t('detail.history')}</h2>
            <AuditHistory entries={props.audit} timeZone={timeZone} />
          </section>
        </div>

        <aside class="stack">
          <QrCard code={link.code} shortUrl={link.shortUrl} />
          <SafetyCard
            safety={link.safety}
            reason={props.row.safetyReason}
            checkedAt={props.row.safetyCheckedAt}
          />
          <ReplicasCard vendors={link.vendors} temporal={props.temporal} />
          <DeleteLinkCard code={link.code} csrfToken={props.session.csrfToken} error={props.deleteError} />
        </aside>
      </div>
    </AppLayout>
  );
}
