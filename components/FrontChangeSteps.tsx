import type { I18n } from '../lib/i18n/translator.ts';
import { useI18n } from './I18n.tsx';

/** Step names as the workflow reports them, and their catalogue keys. */
const STEP_KEYS = {
  'preflight repair': 'step.preflightRepair',
  'preflight check': 'step.preflightCheck',
  'verify in-house answers': 'step.verifyInhouse',
  'lower DNS TTL': 'step.lowerTtl',
  'wait out the old DNS TTL': 'step.waitTtl',
  switch: 'step.switch',
  'DNS change': 'step.dnsChange',
  'verify public front': 'step.verifyPublic',
  'raise DNS TTL': 'step.raiseTtl',
} as const;

/** A step's name for people (an unknown one as the workflow reports it). */
export function stepName(i18n: I18n, name: string): string {
  const key = STEP_KEYS[name as keyof typeof STEP_KEYS];
  return key ? i18n.t(key) : name;
}

/** A duration for people: "850 ms", "3.2 s". */
export function formatDuration(i18n: I18n, ms: number): string {
  return ms < 1000 ? i18n.t('unit.ms', { n: ms }) : i18n.t('unit.s', { n: Math.round(ms / 100) / 10 });
}

/** What a failover, failback or drill does, in order, for the steps list (names as the workflow reports them). */
export function plannedFrontSteps(kind: string, to: string, planned: boolean): string[] {
  const steps = ['preflight repair', 'preflight check'];
  if (to === 'inhouse') steps.push('verify in-house answers');
  if (kind === 'drill') return steps;
  if (planned) steps.unshift('lower DNS TTL');
  if (planned) steps.push('wait out the old DNS TTL');
  steps.push('switch', 'DNS change', 'verify public front');
  if (planned) steps.push('raise DNS TTL');
  return steps;
}

/**
 * The running front change step by step: finished steps with their durations, the current one (with the end of
 * the DNS TTL wait while it lasts), then what is left.
 */
export function FrontChangeSteps(props: {
  kind: string;
  to: string;
  current: string | null;
  steps: { name: string; ms: number }[];
  ttlWaitUntil: Date | null;
  timeZone: string;
}) {
  const i18n = useI18n();
  const done = new Map(props.steps.map((s) => [s.name, s.ms]));
  const planned = props.steps.some((s) => s.name === 'lower DNS TTL') || props.current === 'lower DNS TTL';
  const names = plannedFrontSteps(props.kind, props.to, planned);
  for (const s of props.steps) if (!names.includes(s.name)) names.push(s.name);
  return (
    <ol class="steps small" aria-label={i18n.t('steps.label')}>
      {names.map((name) => {
        const ms = done.get(name);
        const state = ms !== undefined ? 'done' : name === props.current ? 'current' : 'todo';
        return (
          <li key={name} class={`step step-${state}`} aria-current={state === 'current' ? 'step' : undefined}>
            {state === 'done' ? '✓ ' : state === 'current' ? (i18n.dir === 'rtl' ? '◀ ' : '▶ ') : '· '}
            {stepName(i18n, name)}
            {ms !== undefined ? ` (${formatDuration(i18n, ms)})` : ''}
            {state === 'current' && name === 'wait out the old DNS TTL' && props.ttlWaitUntil
              ? ` ${i18n.t('steps.until', { time: i18n.dateTime(props.ttlWaitUntil) })}`
              : ''}
          </li>
        );
      })}
    </ol>
  );
}
