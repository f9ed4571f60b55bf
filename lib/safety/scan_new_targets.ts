import { type FieldError, TargetBlockedError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import type { SafetyVerdict } from '../stores/link_rows.ts';
import type { SafetyScanner } from './safety_scanner.ts';
import { describeScanResult, nextSafetyVerdict, type ScanResult } from './scan_result.ts';

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
  input: { url: string; expiredUrl?: string | null | undefined },
  now: Date,
): Promise<InitialSafety> {
  return (await scanChangedTargets(scanner, input, now))!;
}

/**
 * scanNewTargets for an edit: only the URLs given are scanned; the new safety columns when `url` was given,
 * null when only the fallback changed.
 */
export async function scanChangedTargets(
  scanner: SafetyScanner,
  input: { url?: string | undefined; expiredUrl?: string | null | undefined },
  now: Date,
): Promise<InitialSafety | null> {
  const urls = [input.url, input.expiredUrl ?? undefined].filter((u): u is string => u !== undefined);
  if (urls.length === 0) return null;
  const results = await scanner.scanMany(urls);
  return judgeNewTargets(
    input.url !== undefined ? results[0] : undefined,
    input.expiredUrl ? results.at(-1) : undefined,
    now,
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
): InitialSafety | null {
  const errors: FieldError[] = [];
  if (main?.verdict === 'blocked') {
    errors.push({ path: 'url', message: fieldProblem('blocked', { reason: describeScanResult(main) }) });
  }
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
  return {
    safety: nextSafetyVerdict('unknown', main),
    safetyReason: describeScanResult(main),
    safetyCheckedAt: main.complete ? now : null,
  };
}
