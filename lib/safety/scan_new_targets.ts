import { type FieldError, TargetBlockedError } from '../errors.ts';
import type { SafetyVerdict } from '../links/link.ts';
import type { SafetyScanner } from './safety_scanner.ts';
import { describeScanResult, nextSafetyVerdict, type ScanResult } from './scan_result.ts';

/** The safety columns a new link starts with. */
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
  input: { url: string; expiredUrl?: string | undefined },
  now: Date,
): Promise<InitialSafety> {
  const [main, fallback] = (await scanner.scanMany(
    input.expiredUrl ? [input.url, input.expiredUrl] : [input.url],
  )) as [ScanResult, ScanResult | undefined];
  const errors: FieldError[] = [];
  if (main.verdict === 'blocked')
    errors.push({ path: 'url', message: `is blocked: ${describeScanResult(main)}` });
  if (fallback && fallback.verdict !== 'clean') {
    errors.push({
      path: 'expiredUrl',
      message:
        fallback.verdict === 'blocked'
          ? `is blocked: ${describeScanResult(fallback)}`
          : `must be a clean destination (it is served without a warning page): ${describeScanResult(fallback)}`,
    });
  }
  if (errors.length > 0) throw new TargetBlockedError(errors);
  return {
    safety: nextSafetyVerdict('unknown', main),
    safetyReason: describeScanResult(main),
    safetyCheckedAt: main.complete ? now : null,
  };
}
