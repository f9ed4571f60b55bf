// Destination checks (link rot): how often each link's destination is checked, how politely, and which hosts never.
import { z } from 'zod';
import { commaList, duration, optionalHttpUrl } from './env_values.ts';

const rate = (fallback: number) =>
  z.coerce
    .number({ message: 'must be a number of requests per second (e.g. 0.5)' })
    .positive('must be a number of requests per second above 0 (e.g. 0.5)')
    .max(100, 'must be at most 100 requests per second')
    .default(fallback);

export const destinationsEnv = z.object({
  DESTINATION_CHECK_INTERVAL: duration.default('7d'),
  // How often the Schedule looks for due checks (new links are due at once); `off`: no Schedule.
  DESTINATION_CHECK_EVERY: z
    .string()
    .trim()
    .default('15m')
    .pipe(z.union([z.literal('off'), duration], { message: 'must be a duration like 15m or 1h, or off' })),
  DESTINATION_CHECK_HOST_RATE: rate(0.5),
  DESTINATION_CHECK_OWN_HOST_RATE: rate(4),
  DESTINATION_CHECK_TIMEOUT_MS: z.coerce
    .number({ message: 'must be a whole number of milliseconds (1000 to 60000)' })
    .int('must be a whole number of milliseconds (1000 to 60000)')
    .min(1000, 'must be a whole number of milliseconds (1000 to 60000)')
    .max(60_000, 'must be a whole number of milliseconds (1000 to 60000)')
    .default(10_000),
  DESTINATION_CHECK_EXCLUDED_HOSTS: commaList,
  DESTINATION_CHECK_CONTACT_URL: optionalHttpUrl,
});

export interface DestinationsConfig {
  destinationChecks: {
    /** DESTINATION_CHECK_INTERVAL: how long a checked destination waits for its next check. */
    interval: string;
    /** DESTINATION_CHECK_EVERY: how often the Schedule runs the due checks; undefined: no Schedule. */
    every: string | undefined;
    /** Requests per second to one host (DESTINATION_CHECK_HOST_RATE), and to the newsroom's own hosts. */
    hostRate: number;
    ownHostRate: number;
    /** DESTINATION_CHECK_TIMEOUT_MS: one request's deadline, connect to last byte read. */
    timeoutMs: number;
    /** DESTINATION_CHECK_EXCLUDED_HOSTS: hosts (and their subdomains) never checked. */
    excludedHosts: string[];
    /** DESTINATION_CHECK_CONTACT_URL: named in the checker's User-Agent; unset: APP_BASE_URL. */
    contactUrl: string | undefined;
  };
}

export function destinationsConfig(e: z.infer<typeof destinationsEnv>): DestinationsConfig {
  return {
    destinationChecks: {
      interval: e.DESTINATION_CHECK_INTERVAL,
      every: e.DESTINATION_CHECK_EVERY === 'off' ? undefined : e.DESTINATION_CHECK_EVERY,
      hostRate: e.DESTINATION_CHECK_HOST_RATE,
      ownHostRate: e.DESTINATION_CHECK_OWN_HOST_RATE,
      timeoutMs: e.DESTINATION_CHECK_TIMEOUT_MS,
      excludedHosts: e.DESTINATION_CHECK_EXCLUDED_HOSTS.map((h) => h.replace(/^\*?\./, '')),
      contactUrl: e.DESTINATION_CHECK_CONTACT_URL,
    },
  };
}
