import type { SafetyVerdict } from '../stores/link_rows.ts';

/** What a scan can conclude about one URL (`unknown` is only ever stored, never concluded). */
export type ScanVerdict = Exclude<SafetyVerdict, 'unknown'>;

/** One rule's objection to a URL. */
export interface ScanFinding {
  verdict: ScanVerdict;
  /** Which rule: scheme, private_address, ip_literal, special_host, credentials, lookalike, blocklist, safe_browsing, reports. */
  rule: string;
  /** Human-readable, shown to editors in problem+json and stored as the link's safety_reason. */
  reason: string;
}

/** The scanner's answer for one URL. */
export interface ScanResult {
  url: string;
  verdict: ScanVerdict;
  findings: ScanFinding[];
  /**
   * False when a configured remote check (Safe Browsing) could not answer: a clean verdict is then not
   * verified, and a re-scan must not clear an earlier, worse verdict on its strength.
   */
  complete: boolean;
}

// `unknown` ranks between clean and warn: an unverified link is not known to be clean.
const RANK: Record<SafetyVerdict, number> = { clean: 0, unknown: 1, warn: 2, blocked: 3 };

/** The worse of two verdicts. */
export function worseVerdict<V extends SafetyVerdict>(a: V, b: V): V {
  return RANK[a] >= RANK[b] ? a : b;
}

/** The verdict and findings that many findings add up to (clean when there are none). */
export function toScanResult(url: string, findings: ScanFinding[], complete: boolean): ScanResult {
  let verdict: ScanVerdict = 'clean';
  for (const f of findings) verdict = worseVerdict(verdict, f.verdict);
  return { url, verdict, findings, complete };
}

/** The reason stored with a verdict: the findings that decided it, most serious first. */
export function describeScanResult(result: ScanResult): string | null {
  const decisive = result.findings.filter((f) => f.verdict === result.verdict);
  if (decisive.length > 0) return decisive.map((f) => f.reason).join('; ');
  return result.complete ? null : 'Safe Browsing was unavailable; local rules only';
}

/**
 * The verdict a link should hold after a scan, given the one it holds. A complete scan decides alone;
 * an incomplete one (Safe Browsing unavailable) can make a verdict worse but never better, so an outage
 * never clears a block, and an unverified link stays `unknown` until a full check succeeds.
 */
export function nextSafetyVerdict(previous: SafetyVerdict, result: ScanResult): SafetyVerdict {
  if (result.complete) return result.verdict;
  return worseVerdict<SafetyVerdict>(previous, result.verdict);
}

/**
 * One link's verdict from the results of all its destinations — its url first, then each routing rule's target
 * (ADR 0080): every finding counts, and it is complete only when every scan was.
 */
export function combineScanResults(results: readonly ScanResult[]): ScanResult {
  if (results.length === 1) return results[0]!;
  return toScanResult(
    results[0]!.url,
    results.flatMap((r) => r.findings),
    results.every((r) => r.complete),
  );
}

/** A link's destinations as a scan takes them: its url, then each routing rule's target. */
export function linkDestinations(link: {
  targetUrl: string;
  routingRules?: readonly { target: string }[] | null;
}): string[] {
  return link.routingRules ? [link.targetUrl, ...link.routingRules.map((r) => r.target)] : [link.targetUrl];
}
