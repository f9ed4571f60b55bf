import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { listBlocklistCandidates } from '../stores/blocklist_store.ts';
import type { Db } from '../stores/sql.ts';
import { canonicalizeHost } from '../targets/canonical_url.ts';
import { getHostSuffixes, matchBlocklist } from './blocklist_entry.ts';
import { checkLookalikeHost } from './lookalike_host.ts';
import { createSafeBrowsing, type SafeBrowsing } from './safe_browsing.ts';
import { type ScanFinding, type ScanResult, type ScanVerdict, toScanResult } from './scan_result.ts';
import { checkUrlRules, getNormalisedHost, isHostOrSubdomain } from './url_rules.ts';

/** Decides whether a destination is clean, worth a warning, or blocked. */
export interface SafetyScanner {
  scan(url: string): Promise<ScanResult>;
  /** Scans many URLs with one blocklist query and as few Safe Browsing calls as possible (≤ 500 each). */
  scanMany(urls: string[]): Promise<ScanResult[]>;
  /** True when `url` is on one of the newsroom's own hosts (SAFETY_TRUSTED_HOSTS): readers never soft-block it. */
  isTrusted?(url: string): boolean;
}

export interface SafetyScannerDeps {
  sql: Db;
  /** Absent when SAFE_BROWSING_API_KEY is unset: local rules only. */
  safeBrowsing?: SafeBrowsing;
  /** Hosts (and subdomains) the newsroom owns: only the scheme rule applies to them (SAFETY_TRUSTED_HOSTS). */
  trustedHosts?: readonly string[];
}

// Malware and phishing pages are refused outright; unwanted software gets the interstitial.
const SAFE_BROWSING_VERDICTS: Record<string, ScanVerdict> = {
  MALWARE: 'blocked',
  SOCIAL_ENGINEERING: 'blocked',
  UNWANTED_SOFTWARE: 'warn',
  POTENTIALLY_HARMFUL_APPLICATION: 'warn',
};

/**
 * The scanner: scheme and address rules, look-alike hosts, the local blocklist, then Google Safe Browsing
 * (when configured) for whatever the local rules did not already block. The worst finding wins.
 */
export function createSafetyScanner(deps: SafetyScannerDeps): SafetyScanner {
  // Canonical host names (lower case, punycode, no trailing dot), as targets are compared.
  const trusted = (deps.trustedHosts ?? []).flatMap((h) => canonicalizeHost(h) ?? []);
  const isTrustedHost = (host: string) => trusted.some((t) => isHostOrSubdomain(host, t));

  async function scanMany(urls: string[]): Promise<ScanResult[]> {
    const items = urls.map((value) => {
      const findings = checkUrlRules(value);
      let parsed: URL | null = null;
      try {
        parsed = new URL(value);
      } catch {}
      const host = parsed ? getNormalisedHost(parsed) : '';
      const isTrusted = parsed !== null && isTrustedHost(host);
      if (isTrusted)
        return { value, parsed, host, findings: findings.filter((f) => f.rule === 'scheme'), done: true };
      if (parsed && findings.every((f) => f.rule !== 'scheme')) {
        const lookalike = checkLookalikeHost(host);
        if (lookalike) findings.push(lookalike);
      }
      return { value, parsed, host, findings, done: parsed === null };
    });

    const open = items.filter((i) => !i.done && i.parsed);
    const entries = await listBlocklistCandidates(
      deps.sql,
      open.map((i) => ({ hostSuffixes: getHostSuffixes(i.host), host: i.host })),
    );
    for (const item of open) {
      for (const entry of matchBlocklist(item.parsed!, entries)) {
        item.findings.push({
          verdict: 'blocked',
          rule: 'blocklist',
          reason: `listed in the local blocklist as ${entry.pattern}${entry.reason ? ` (${entry.reason})` : ''}`,
        });
      }
    }

    const unavailable = new Set<string>();
    if (deps.safeBrowsing) {
      const ask = open.filter((i) => !i.findings.some((f) => f.verdict === 'blocked')).map((i) => i.value);
      if (ask.length > 0) {
        const answer = await deps.safeBrowsing.lookup(ask);
        for (const url of answer.unavailable) unavailable.add(url);
        for (const item of open) {
          for (const threat of answer.threats.get(item.value) ?? []) {
            item.findings.push(toSafeBrowsingFinding(threat));
          }
        }
      }
    }
    return items.map((i) => toScanResult(i.value, i.findings, !unavailable.has(i.value)));
  }

  return {
    async scan(url) {
      return (await scanMany([url]))[0]!;
    },
    scanMany,
    isTrusted(url) {
      try {
        return trusted.length > 0 && isTrustedHost(getNormalisedHost(new URL(url)));
      } catch {
        return false;
      }
    },
  };
}

function toSafeBrowsingFinding(threatType: string): ScanFinding {
  return {
    verdict: SAFE_BROWSING_VERDICTS[threatType] ?? 'warn',
    rule: 'safe_browsing',
    reason: `Google Safe Browsing lists it as ${threatType}`,
  };
}

/** The scanner this deployment's configuration asks for (Safe Browsing only when SAFE_BROWSING_API_KEY is set). */
export function createConfiguredSafetyScanner(
  config: Pick<Config, 'safeBrowsing' | 'safety'>,
  deps: { sql: Db; logger: Logger },
): SafetyScanner {
  const safeBrowsing = config.safeBrowsing
    ? createSafeBrowsing({
        apiKey: config.safeBrowsing.apiKey,
        apiBaseUrl: config.safeBrowsing.apiBaseUrl,
        onError: (e) =>
          deps.logger.warn(
            { status: e.status, detail: e.message, backoffMs: Math.round(e.backoffMs) },
            'Safe Browsing lookup failed; backing off',
          ),
      })
    : undefined;
  return createSafetyScanner({
    sql: deps.sql,
    trustedHosts: config.safety.trustedHosts,
    ...(safeBrowsing ? { safeBrowsing } : {}),
  });
}
