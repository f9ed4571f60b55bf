import type { LinkStatus, SafetyVerdict, VendorState } from '../lib/links/link.ts';

const STATUS_TEXT: Record<LinkStatus, string> = {
  pending: 'Pending',
  active: 'Active',
  expired: 'Expired',
  gone: 'Retired',
  blocked: 'Blocked',
};
const STATUS_TONE: Record<LinkStatus, string> = {
  pending: 'neutral',
  active: 'good',
  expired: 'warn',
  gone: 'muted',
  blocked: 'bad',
};
const SAFETY_TEXT: Record<SafetyVerdict, string> = {
  unknown: 'Not scanned',
  clean: 'Clean',
  warn: 'Warning',
  blocked: 'Unsafe',
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
  return <Badge tone={STATUS_TONE[props.status]} text={STATUS_TEXT[props.status]} />;
}

export function SafetyBadge(props: { safety: SafetyVerdict }) {
  return <Badge tone={SAFETY_TONE[props.safety]} text={SAFETY_TEXT[props.safety]} />;
}

export function VendorStateBadge(props: { state: VendorState }) {
  return (
    <Badge tone={VENDOR_TONE[props.state]} text={props.state[0]!.toUpperCase() + props.state.slice(1)} />
  );
}

export { SAFETY_TEXT, STATUS_TEXT };
