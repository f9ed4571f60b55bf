// Hostile input and outgoing requests: Safe Browsing, re-scans, where reader reports go, which private hosts we reach.
import { z } from 'zod';
import { type OutgoingRule, parseAllowanceEntry } from '../outgoing_request.ts';
import { commaList, duration, optionalHttpUrl, optionalString } from './env_values.ts';

export const safetyEnv = z.object({
  SAFE_BROWSING_API_KEY: optionalString,
  SAFE_BROWSING_API_BASE_URL: optionalHttpUrl.transform((v) => v ?? 'https://safebrowsing.googleapis.com'),
  SAFETY_TRUSTED_HOSTS: commaList,
  SAFETY_RESCAN_INTERVAL: duration.default('12h'),
  REPORT_WEBHOOK_URL: optionalHttpUrl,
  REPORT_WEBHOOK_SECRET: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  // Private addresses or hosts server-side requests to configured URLs may reach (docs/adr/0058-outgoing-requests-rule.md).
  OUTGOING_ALLOWED_PRIVATE: commaList.superRefine((entries, ctx) => {
    for (const entry of entries) {
      if (!parseAllowanceEntry(entry)) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a comma list of host names, IP addresses and CIDR ranges (e.g. hooks.internal,10.20.0.0/16); "${entry}" is none`,
        });
      }
    }
  }),
});

export interface SafetyConfig {
  safeBrowsing: { apiKey: string; apiBaseUrl: string } | undefined;
  /** Hosts exempt from the safety rules (the newsroom's own), and how often every destination is re-checked. */
  safety: { trustedHosts: string[]; rescanInterval: string };
  /** Where reader reports are announced (REPORT_WEBHOOK_URL), signed with REPORT_WEBHOOK_SECRET if set. */
  reportWebhook: { url: string; secret: string | undefined } | undefined;
  /**
   * The rule for server-side requests to configured or received URLs (WordPress listings, the report, CDN and
   * DNS webhooks): OUTGOING_ALLOWED_PRIVATE, the private hosts and ranges they may reach all the same.
   */
  outgoing: OutgoingRule;
}

export function safetyConfig(e: z.infer<typeof safetyEnv>): SafetyConfig {
  return {
    safeBrowsing: e.SAFE_BROWSING_API_KEY
      ? { apiKey: e.SAFE_BROWSING_API_KEY, apiBaseUrl: e.SAFE_BROWSING_API_BASE_URL }
      : undefined,
    safety: { trustedHosts: e.SAFETY_TRUSTED_HOSTS, rescanInterval: e.SAFETY_RESCAN_INTERVAL },
    reportWebhook: e.REPORT_WEBHOOK_URL
      ? { url: e.REPORT_WEBHOOK_URL, secret: e.REPORT_WEBHOOK_SECRET }
      : undefined,
    outgoing: { allowPrivate: e.OUTGOING_ALLOWED_PRIVATE },
  };
}
