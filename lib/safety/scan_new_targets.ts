import { type FieldError, TargetBlockedError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import type { SafetyVerdict } from '../stores/link_rows.ts';
import type { SafetyScanner } from './safety_scanner.ts';
import { describeScanResult, nextSafetyVerdict, type ScanResult, toScanResult } from './scan_result.ts';

/** The safety columns a new link (or a new destination) starts with. */
export interface InitialSafety {
  safety: SafetyVerdict;
  safetyReason: string | null;
  safetyCheckedAt: Date | null;
}

/**
 * Scans a new link's destination (and fallback) before anything is written. A blocked destination is a 422
 * naming `url`; a fallback URL must be clean, because an expired link redirects to it without a warning page.
 * A warning is kept on the link (readers get the interstitial). When Safe Browsing could not answer, the link
 * starts `unknown` (not verified) and the next re-scan decides.
 */
export async function scanNewTargets(
  scanner: SafetyScanner,
  input: {
    url: string;
    expiredUrl?: string | null | undefined;
    rules?: readonly { target: string }[] | undefined;
  },
  now: Date,
): Promise<InitialSafety> {
  return (await scanChangedTargets(scanner, input, now))!;
}

/**
 * scanNewTargets for an edit: only the URLs given are scanned; the new safety columns when `url` was given,
 * null when only the fallback changed. Routing rule targets (ADR 0080) are destinations like `url`: a blocked
 * one is a 422 naming `rules.{i}.target`, and the link's verdict is the worst of `url` and every rule target, so
 * a warned rule target puts the interstitial in front of the link. An edit of the rules passes the link's
 * current `url` with them, because the verdict covers the whole set.
 */
export async function scanChangedTargets(
  scanner: SafetyScanner,
  input: {
    url?: string | undefined;
    expiredUrl?: string | null | undefined;
    rules?: readonly { target: string }[] | null | undefined;
  },
  now: Date,
): Promise<InitialSafety | null> {
  const ruleTargets = (input.rules ?? []).map((r) => r.target);
  const urls = [input.url, ...ruleTargets, input.expiredUrl ?? undefined].filter(
    (u): u is string => u !== undefined,
  );
  if (urls.length === 0) return null;
  const results = await scanner.scanMany(urls);
  const first = input.url !== undefined ? 1 : 0;
  return judgeNewTargets(
    input.url !== undefined ? results[0] : undefined,
    input.expiredUrl ? results.at(-1) : undefined,
    now,
    results.slice(first, first + ruleTargets.length),
  );
}

/**
 * The rules of scanNewTargets over results already in hand (a batch scans all its URLs in one call): throws
 * the 422 for a blocked destination or a fallback that is not clean; the destination's safety columns.
 */
export function judgeNewTargets(
  main: ScanResult | undefined,
  fallback: ScanResult | undefined,
  now: Date,
  rules: readonly ScanResult[] = [],
): InitialSafety | null {
  const errors: FieldError[] = [];
  if (main?.verdict === 'blocked') {
    errors.push({ path: 'url', message: fieldProblem('blocked', { reason: describeScanResult(main) }) });
  }
  rules.forEach((rule, i) => {
    if (rule.verdict === 'blocked') {
      errors.push({
        path: `rules.${i}.target`,
        message: fieldProblem('blocked', { reason: describeScanResult(rule) }),
      });
    }
  });
  if (fallback && fallback.verdict !== 'clean') {
    errors.push({
      path: 'expiredUrl',
      message:
        fallback.verdict === 'blocked'
          ? fieldProblem('blocked', { reason: describeScanResult(fallback) })
          : fieldProblem('fallbackNotClean', { reason: describeScanResult(fallback) }),
    });
  }
  if (errors.length > 0) throw new TargetBlockedError(errors);
  if (!main) return null;
  // The link's verdict covers every destination it sends readers to: its url and each rule target.
  const whole =
    rules.length === 0
      ? main
      : toScanResult(
          main.url,
          [main, ...rules].flatMap((r) => r.findings),
          [main, ...rules].every((r) => r.complete),
        );
  return {
    safety: nextSafetyVerdict('unknown', whole),
    safetyReason: describeScanResult(whole),
    safetyCheckedAt: whole.complete ? now : null,
  };
}
