// Watching Lifeline from outside: the black-box prober's Schedule and what it asks, and the failover drill's
// Schedule (docs/OPERATIONS.md, "The prober" and "Scheduled drills").
import { z } from 'zod';
import { optionalHttpUrl, perDomainValues } from './env_values.ts';

const intervalOrOff = (example: string) =>
  z
    .string()
    .trim()
    .regex(/^(off|[1-9]\d*(m|h|d))$/, `must be a duration like ${example}, or off`);

export const proberEnv = z.object({
  PROBE_INTERVAL: intervalOrOff('1m or 5m').default('1m'),
  // Where the prober asks, as a reader would: the public short URL base unless another front is to be watched.
  PROBE_BASE_URL: optionalHttpUrl,
  // Another short domain's probe base (`short.domain=url`, commas); a domain not named is asked on its public base.
  PROBE_BASE_URLS: perDomainValues(/^https?:\/\/[^\s,]+$/, 'http(s) URL'),
  PROBE_SAMPLE: z.coerce.number().int().min(1).max(100).default(5),
  PROBE_TIMEOUT_MS: z.coerce.number().int().min(500).max(30_000).default(5_000),
  // The canary link's destination; unset: ROOT_REDIRECT_URL, and without either there is no canary.
  PROBE_CANARY_URL: optionalHttpUrl,
  DRILL_INTERVAL: intervalOrOff('7d or 1d').default('7d'),
});

export interface ProberConfig {
  probe: {
    /** PROBE_INTERVAL; undefined: `off` (the Schedule is removed). */
    interval: string | undefined;
    /** PROBE_BASE_URL; undefined: the public short base URL. */
    baseUrl: string | undefined;
    /**
     * PROBE_BASE_URLS: another short domain's probe base by host name (no trailing slash); a domain not named is
     * asked on its own public base (SHORT_BASE_URL's scheme and port on its name).
     */
    baseUrls: ReadonlyMap<string, string>;
    /** Codes of the rotating sample per probe (PROBE_SAMPLE), besides the canary. */
    sample: number;
    timeoutMs: number;
    /** PROBE_CANARY_URL; undefined: ROOT_REDIRECT_URL, else no canary. */
    canaryUrl: string | undefined;
  };
  /** DRILL_INTERVAL: how often the failover drill runs on its own; undefined: `off`. */
  drillInterval: string | undefined;
}

export function proberConfig(e: z.infer<typeof proberEnv>): ProberConfig {
  return {
    probe: {
      interval: e.PROBE_INTERVAL === 'off' ? undefined : e.PROBE_INTERVAL,
      baseUrl: e.PROBE_BASE_URL,
      baseUrls: new Map([...(e.PROBE_BASE_URLS ?? new Map())].map(([d, u]) => [d, u.replace(/\/+$/, '')])),
      sample: e.PROBE_SAMPLE,
      timeoutMs: e.PROBE_TIMEOUT_MS,
      canaryUrl: e.PROBE_CANARY_URL,
    },
    drillInterval: e.DRILL_INTERVAL === 'off' ? undefined : e.DRILL_INTERVAL,
  };
}
