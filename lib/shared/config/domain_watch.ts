// Watching the lifeline itself: the short domain's and the app host's registration (RDAP), certificate and
// reputation, read on a Schedule (lib/domains, workflows/watch_domains.ts).
import { z } from 'zod';
import { optionalHttpUrl, port } from './env_values.ts';

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

export const domainWatchEnv = z.object({
  DOMAIN_WATCH_INTERVAL: z
    .string()
    .trim()
    .regex(/^(off|[1-9]\d*(m|h|d))$/, 'must be a duration like 30m, 6h or 1d, or off')
    .default('6h'),
  // The registered domains whose RDAP record is read; unset: the last two labels of the short and app hosts.
  DOMAIN_WATCH_DOMAINS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim().toLowerCase().replace(/\.$/, ''))
        .filter(Boolean),
    )
    .superRefine((names, ctx) => {
      for (const name of names) {
        if (!HOST_NAME.test(name)) {
          ctx.addIssue({
            code: 'custom',
            message: `must be a comma list of registered domain names in ASCII (punycode), e.g. sho.rt,newsroom.example; "${name}" is none`,
          });
        }
      }
    }),
  // One RDAP base URL for every domain (a registry's or a proxy's); unset: IANA's bootstrap file finds each one.
  DOMAIN_WATCH_RDAP_URL: optionalHttpUrl,
  DOMAIN_WATCH_RDAP_BOOTSTRAP_URL: optionalHttpUrl.transform(
    (v) => v ?? 'https://data.iana.org/rdap/dns.json',
  ),
  DOMAIN_WATCH_TLS_PORT: port.pipe(z.number().min(1, 'must be a port from 1 to 65535')).default(443),
});

type DomainWatchEnv = z.infer<typeof domainWatchEnv>;

export interface DomainWatchConfig {
  /**
   * The watch of the short domain and the app host (lib/domains): how often it runs (undefined: `off`, no
   * Schedule), the registered domains read through RDAP (empty: derived from the hosts), where RDAP is found,
   * and the port the certificate is read on.
   */
  domainWatch: {
    interval: string | undefined;
    domains: string[];
    rdapUrl: string | undefined;
    rdapBootstrapUrl: string;
    tlsPort: number;
  };
}

export function domainWatchConfig(e: DomainWatchEnv): DomainWatchConfig {
  return {
    domainWatch: {
      interval: e.DOMAIN_WATCH_INTERVAL === 'off' ? undefined : e.DOMAIN_WATCH_INTERVAL,
      domains: [...new Set(e.DOMAIN_WATCH_DOMAINS)],
      rdapUrl: e.DOMAIN_WATCH_RDAP_URL,
      rdapBootstrapUrl: e.DOMAIN_WATCH_RDAP_BOOTSTRAP_URL,
      tlsPort: e.DOMAIN_WATCH_TLS_PORT,
    },
  };
}
