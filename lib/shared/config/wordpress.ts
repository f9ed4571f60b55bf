// WordPress: the webhook secret, each site's signed-listing base, and the breaker on mass change by WordPress.
import { z } from 'zod';
import { isHttpsOrLoopback, optionalString } from './env_values.ts';

export const wordpressEnv = z.object({
  WORDPRESS_WEBHOOK_SECRET: optionalString.pipe(
    z.string().min(16, 'must be at least 16 characters').optional(),
  ),
  WORDPRESS_REST_URLS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const out: Record<string, string> = {};
      for (const entry of (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const eq = entry.indexOf('=');
        const site = entry.slice(0, eq).trim();
        const url = entry.slice(eq + 1).trim();
        let ok = eq > 0 && /^[A-Za-z0-9._-]{1,100}$/.test(site);
        try {
          ok = ok && ['http:', 'https:'].includes(new URL(url).protocol);
        } catch {
          ok = false;
        }
        if (!ok) {
          ctx.addIssue({
            code: 'custom',
            message: `must be a comma list of site=restUrl (e.g. news=https://news.example/wp-json/lifeline/v1/); "${entry}" is not`,
          });
          return z.NEVER;
        }
        // The signed listing shows drafts' and embargoed posts' titles: it is never read over plain http, so a
        // listed http URL would only fail at the first reconciliation. Said here, at start-up, instead.
        if (!isHttpsOrLoopback(url)) {
          ctx.addIssue({
            code: 'custom',
            message: `${site}: the listing is read over https only (plain http only to a loopback address, for tests); "${url}" is not`,
          });
          return z.NEVER;
        }
        out[site] = url.endsWith('/') || url.includes('?') ? url : `${url}/`;
      }
      return out;
    }),
  // The breaker on mass change by WordPress (ADR 0057): a share of a site's links, and a floor.
  WORDPRESS_BREAKER_SHARE: z.coerce
    .number({ message: 'must be a share between 0 and 1 (0.02 is 2%)' })
    .min(0, 'must be a share between 0 and 1 (0.02 is 2%)')
    .max(1, 'must be a share between 0 and 1 (0.02 is 2%)')
    .default(0.02),
  WORDPRESS_BREAKER_MIN: z.coerce
    .number({ message: 'must be a whole number of links (0 or more)' })
    .int('must be a whole number of links (0 or more)')
    .min(0, 'must be a whole number of links (0 or more)')
    .max(100_000_000)
    .default(50),
});

export interface WordpressConfig {
  wordpressWebhookSecret: string | undefined;
  /** WORDPRESS_REST_URLS: each site's signed-listing base, overriding the restUrl its events carry. */
  wordpressRestUrls: Record<string, string>;
  /**
   * WORDPRESS_BREAKER_SHARE / WORDPRESS_BREAKER_MIN: most of a site's links a WordPress path may retarget or
   * make gone in one run or hour without an admin's approval: max(share × the site's links, min).
   */
  wordpressBreaker: { share: number; min: number };
}

export function wordpressConfig(e: z.infer<typeof wordpressEnv>): WordpressConfig {
  return {
    wordpressWebhookSecret: e.WORDPRESS_WEBHOOK_SECRET,
    wordpressRestUrls: e.WORDPRESS_REST_URLS,
    wordpressBreaker: { share: e.WORDPRESS_BREAKER_SHARE, min: e.WORDPRESS_BREAKER_MIN },
  };
}
