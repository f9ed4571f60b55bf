import type { LinkStatus, SafetyVerdict, VendorState } from '../lib/links/link.ts';
import { useI18n } from './I18n.tsx';

const STATUS_TONE: Record<LinkStatus, string> = {
  pending: 'neutral',
  active: 'good',
  expired: 'warn',
  gone: 'muted',
  blocked: 'bad',
};
const SAFETY_TONE: Record<SafetyVerdict, string> = {
  unknown: 'neutral',
  clean: 'good',
  warn: 'warn',
  blocked: 'bad',
};
const VENDOR_TONE: Record<VendorState, string> = {
  pending: 'neutral',
  synced: 'good',
  failed: 'bad',
  collision: 'bad',
  inhouse: 'muted',
};

/** A small coloured label; the text always says what the colour means. */
export function Badge(props: { tone: string; text: string; title?: string }) {
  return (
    <span class={`badge badge-${props.tone}`} title={props.title}>
      {props.text}
    </span>
  );
}

export function StatusBadge(props: { status: LinkStatus }) {
  const { t } = useI18n();
  return <Badge tone={STATUS_TONE[props.status]} text={t(`status.${props.status}`)} />;
}

export function SafetyBadge(props: { safety: SafetyVerdict }) {
  const { t } = useI18n();
  return <Badge tone={SAFETY_TONE[props.safety]} text={t(`safety.${props.safety}`)} />;
}

export function VendorStateBadge(props: { state: VendorState }) {
  const { t } = useI18n();
  return <Badge tone={VENDOR_TONE[props.state]} text={t(`vendorState.${props.state}`)} />;
}
