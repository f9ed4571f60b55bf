import {
  ApplicationFailure,
  CancellationScope,
  condition,
  executeChild,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import {
  type ChangeFrontInput,
  type ChangeFrontReport,
  dnsChangedSignal,
  type Front,
  frontChangeStatusQuery,
  type ReconcileLinksInput,
  type ReconcileReport,
} from './contract.ts';
import type { reconcileLinksWorkflow } from './reconcile_links.ts';

const DEFAULT_VERIFY_PER_CALL = 5_000;

const { verifyInhouseAnswers } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '20s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m' },
});
const { switchFront, pointDnsAt, recordOpsRunStarted, recordOpsRunFinished } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['BadInput'],
  },
});
// The short domain's TTL around a planned switch: one proxy per purpose, so Temporal UI names each step.
const ttlRetry = {
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
} as const;
const { setDnsTtl: lowerDnsTtl } = proxyActivities<Activities>({
  ...ttlRetry,
  summary: 'lower the DNS TTL before the switch',
});
const { setDnsTtl: raiseDnsTtl } = proxyActivities<Activities>({
  ...ttlRetry,
  summary: 'set the DNS TTL back after the switch',
});
// DNS takes its time to follow: keep checking for up to two hours.
const { verifyPublicFront } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  scheduleToCloseTimeout: '2h',
  retry: {
    initialInterval: '5s',
    backoffCoefficient: 1.5,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['BadInput'],
  },
});

/**
 * Vendor failover, failback, and drills: preflight reconciliation to 100% (a repair pass, then a check pass
 * that must find nothing the new front would answer wrongly); proof that the in-house resolver answers every
 * active code right (failover to in-house; for Bitly the check pass proved its copy); the switch of
 * `active_front`; the DNS change (the adapter, or the operator's `dnsChanged` signal); a check through the
 * public short domain; the record in ops_runs. A drill stops before the switch and reports how long a real
 * run would take. One at a time (the API reserves the ops_runs row). IDs `failover:…`, `failback:…`, `drill:…`.
 */
export async function changeFrontWorkflow(input: ChangeFrontInput): Promise<ChangeFrontReport> {
  const { workflowId } = workflowInfo();
  const started = Date.now();
  const kind = input.drill ? 'drill' : input.to === 'inhouse' ? 'failover' : 'failback';
  // The short domain whose front this is (absent: the default, as in every run before fronts were per domain).
  const on = input.domain ? { domain: input.domain } : {};
  const report: ChangeFrontReport = {
    to: input.to,
    ...on,
    drill: input.drill,
    steps: [],
    preflight: null,
    verify: { checked: 0, mismatched: 0, examples: [] },
    switched: false,
    dns: 'skipped',
    automatedMs: 0,
    estimatedFailoverMs: 0,
    durationMs: 0,
  };
  let step = 'preflight';
  let dnsChanged = false;
  let waitingForDns = false;
  let ttlWaitUntilMs: number | null = null;
  setHandler(dnsChangedSignal, ({ by }) => {
    dnsChanged = true;
    log.info('operator reports the DNS change', { by });
  });
  setHandler(frontChangeStatusQuery, () => ({
    step,
    to: input.to,
    drill: input.drill,
    waitingForDns,
    verified: report.verify.checked,
    steps: report.steps,
    ttlWaitUntilMs,
  }));
  const timed = async <T>(name: string, automated: boolean, work: () => Promise<T>): Promise<T> => {
    step = name;
    const t0 = Date.now();
    const result = await work();
    const ms = Date.now() - t0;
    report.steps.push({ name, ms });
    if (automated) report.automatedMs += ms;
    return result;
  };

  await recordOpsRunStarted({
    kind,
    workflowId,
    report: { to: input.to, requestedBy: input.requestedBy, ...on },
  });
  // A planned switch (not a drill, not an emergency) lowers the TTL first; runs started before this code (no
  // loweredTtlSeconds in their input) and their replays take none of these steps.
  const ttlDance =
    !input.drill &&
    !input.emergency &&
    input.loweredTtlSeconds !== undefined &&
    patched('dns-ttl-before-switch');
  /** Set while the TTL is lowered: what to set it back to. */
  let lowered: { previous: number; at: number } | null = null;
  try {
    if (ttlDance) {
      const low = input.loweredTtlSeconds!;
      const change = await timed('lower DNS TTL', false, () =>
        lowerDnsTtl({ ttlSeconds: low, workflowId, ...on }),
      );
      if (!change.supported) {
        report.dnsTtl = {
          skipped: change.adapter
            ? 'the DNS adapter cannot set TTLs (it answered 501)'
            : 'no DNS adapter: lower the TTL at your DNS provider before a planned switch',
        };
      } else {
        const previous = change.previousTtlSeconds ?? input.dnsTtlSeconds;
        if (previous <= low) {
          // It was already that low (or lower): put it back as it was; there is nothing to wait out.
          await timed('set DNS TTL back', false, () =>
            raiseDnsTtl({ ttlSeconds: previous, workflowId, ...on }),
          );
          report.dnsTtl = { skipped: `the TTL was already ${previous} s` };
        } else {
          lowered = { previous, at: Date.now() };
          report.dnsTtl = { lowered: low, previous, waitedMs: 0, raised: false };
        }
      }
    }
    // 1. Preflight: repair, then prove nothing is left that the new front would answer wrongly.
    const reconcile = (suffix: string, args: ReconcileLinksInput) =>
      executeChild<typeof reconcileLinksWorkflow>('reconcileLinksWorkflow', {
        workflowId: `${workflowId}:${suffix}`,
        args: [args],
      });
    const repair = await timed('preflight repair', true, () =>
      reconcile('reconcile', { reason: `preflight of ${workflowId}`, repair: true, importExtra: true }),
    );
    const check = await timed('preflight check', true, () =>
      reconcile('reconcile-check', { reason: `preflight check of ${workflowId}`, repair: false }),
    );
    report.preflight = { repair, check };
    const blocking = getPreflightBlockers(input.to, check, input.domain ?? '');
    if (blocking.length > 0) {
      throw ApplicationFailure.nonRetryable(
        `preflight found drift the ${input.to} front cannot serve: ${blocking.join(', ')}`,
        'PreflightFailed',
      );
    }

    // 2. The in-house resolver answers every active code as Postgres says (Bitly's copy was proved above).
    if (input.to === 'inhouse') {
      await timed('verify in-house answers', true, async () => {
        let progress = {
          cursor: '',
          checked: 0,
          mismatched: 0,
          examples: [] as ChangeFrontReport['verify']['examples'],
        };
        for (let done = false; !done; ) {
          const result = await verifyInhouseAnswers({
            progress,
            budget: input.verifyPerCall ?? DEFAULT_VERIFY_PER_CALL,
            ...on,
          });
          progress = result.progress;
          report.verify = {
            checked: progress.checked,
            mismatched: progress.mismatched,
            examples: progress.examples,
          };
          done = result.done;
        }
      });
      if (report.verify.mismatched > 0) {
        throw ApplicationFailure.nonRetryable(
          `the in-house resolver answered ${report.verify.mismatched} of ${report.verify.checked} active codes wrongly`,
          'VerificationFailed',
        );
      }
    }

    if (input.drill) {
      report.estimatedFailoverMs = report.automatedMs + input.dnsTtlSeconds * 1000;
    } else {
      // 2b. Resolvers that asked before the TTL was lowered may keep the old answer for the old TTL: wait it out
      // (a durable timer; the preflight and verification above already used part of it).
      if (lowered) {
        const until = lowered.at + lowered.previous * 1000;
        await timed('wait out the old DNS TTL', false, async () => {
          ttlWaitUntilMs = until;
          const remaining = until - Date.now();
          if (remaining > 0) {
            await sleep(remaining, { summary: `wait out the old DNS TTL (${lowered!.previous} s)` });
          }
          ttlWaitUntilMs = null;
        });
        if (report.dnsTtl && 'waitedMs' in report.dnsTtl) report.dnsTtl.waitedMs = Date.now() - lowered.at;
      }
      // 3. The switch, once.
      // switchFront is idempotent per run: a retry finds its own switch done.
      await timed('switch', true, () => switchFront({ to: input.to, workflowId, ...on }));
      report.switched = true;
      // 4. DNS: the adapter, or the operator's signal (their time is not ours: not counted as automated).
      const dns = await timed('DNS change', false, async () => {
        const { adapter } = await pointDnsAt({ to: input.to, workflowId, ...on });
        if (adapter) return 'adapter' as const;
        waitingForDns = true;
        await condition(() => dnsChanged);
        waitingForDns = false;
        return 'operator' as const;
      });
      report.dns = dns;
      // 5. Readers reach the new front.
      await timed('verify public front', true, () =>
        verifyPublicFront({ to: input.to, sample: input.publicSample ?? 20, ...on }),
      );
      report.estimatedFailoverMs = report.automatedMs + input.dnsTtlSeconds * 1000;
      // 6. Readers follow within the lowered TTL; the record gets its usual TTL back.
      if (lowered) {
        const previous = lowered.previous;
        await timed('raise DNS TTL', false, () => raiseDnsTtl({ ttlSeconds: previous, workflowId, ...on }));
        lowered = null;
        if (report.dnsTtl && 'raised' in report.dnsTtl) report.dnsTtl.raised = true;
      }
    }
  } catch (error) {
    report.durationMs = Date.now() - started;
    // A run that fails or is cancelled with the TTL lowered sets it back (best effort; the report says so).
    if (lowered) {
      const previous = lowered.previous;
      await CancellationScope.nonCancellable(() =>
        raiseDnsTtl({ ttlSeconds: previous, workflowId, ...on }).then(
          () => {
            if (report.dnsTtl && 'raised' in report.dnsTtl) report.dnsTtl.raised = true;
          },
          () => undefined,
        ),
      );
    }
    await CancellationScope.nonCancellable(() =>
      recordOpsRunFinished({
        workflowId,
        status: isCancellation(error) ? 'cancelled' : 'failed',
        report: { ...report, failedAt: step, error: error instanceof Error ? error.message : String(error) },
      }),
    );
    throw error;
  }
  step = 'done';
  report.durationMs = Date.now() - started;
  await recordOpsRunFinished({ workflowId, status: 'succeeded', report });
  log.info(`${kind} finished`, {
    to: input.to,
    durationMs: report.durationMs,
    estimatedFailoverMs: report.estimatedFailoverMs,
  });
  return report;
}

/**
 * What in a preflight check stops a change of `domain`'s front (its stored name) to `to`: drift that front would
 * serve wrongly. Bitly's drift is that domain's own when the report has it by domain (ADR 0073), else the total.
 */
export function getPreflightBlockers(to: Front, check: ReconcileReport, domain = ''): string[] {
  const blockers: string[] = [];
  const byDomain = check.bitly?.byDomain;
  const bitly = byDomain
    ? (byDomain.find((d) => d.domain === domain)?.drift ?? {})
    : (check.bitly?.drift ?? {});
  const serving = check.serving?.drift ?? {};
  if (to === 'inhouse') {
    // Every link in the wild must be ours, and the serving store must answer it.
    if (bitly.extra) blockers.push(`${bitly.extra} Bitly-only links not imported`);
    if (bitly.unimportable)
      blockers.push(`${bitly.unimportable} Bitly links with back-halves we cannot serve`);
    if (serving.missing) blockers.push(`${serving.missing} links missing from the serving store`);
    if (serving.stale) blockers.push(`${serving.stale} stale serving records`);
  } else {
    if (!check.bitly) blockers.push('Bitly is not configured');
    if (bitly.missing) blockers.push(`${bitly.missing} active links missing on Bitly`);
    if (bitly.stale) blockers.push(`${bitly.stale} stale Bitly copies`);
    if (bitly.collision) blockers.push(`${bitly.collision} codes Bitly holds for someone else`);
  }
  return blockers;
}
