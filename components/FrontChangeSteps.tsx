import { formatDateTime } from '../lib/ui/time_zone.ts';

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
  const done = new Map(props.steps.map((s) => [s.name, s.ms]));
  const planned = props.steps.some((s) => s.name === 'lower DNS TTL') || props.current === 'lower DNS TTL';
  const names = plannedFrontSteps(props.kind, props.to, planned);
  for (const s of props.steps) if (!names.includes(s.name)) names.push(s.name);
  return (
    <ol class="steps small" aria-label="Steps">
      {names.map((name) => {
        const ms = done.get(name);
        const state = ms !== undefined ? 'done' : name === props.current ? 'current' : 'todo';
        return (
          <li key={name} class={`step step-${state}`} aria-current={state === 'current' ? 'step' : undefined}>
            {state === 'done' ? '✓ ' : state === 'current' ? '▶ ' : '· '}
            {name}
            {ms !== undefined ? ` (${ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`})` : ''}
            {state === 'current' && name === 'wait out the old DNS TTL' && props.ttlWaitUntil
              ? ` until ${formatDateTime(props.ttlWaitUntil, props.timeZone)}`
              : ''}
          </li>
        );
      })}
    </ol>
  );
}
