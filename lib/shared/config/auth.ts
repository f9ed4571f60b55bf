// Who may do what from the start: the bootstrap API key, the first admin, and sign-ins waiting for a hash.
import { z } from 'zod';
import type { IssueSink } from '../temporal_settings.ts';
import { optionalString } from './env_values.ts';

export const authEnv = z.object({
  BOOTSTRAP_API_KEY: optionalString.pipe(z.string().min(20, 'must be at least 20 characters').optional()),
  ADMIN_EMAIL: optionalString.pipe(z.email('must be an email address').optional()),
  ADMIN_PASSWORD: optionalString.pipe(
    z
      .string()
      .min(10, 'must be at least 10 characters')
      // lib/auth/passwords.ts PASSWORD_MAX_BYTES: a longer password could never sign in.
      .refine((v) => Buffer.byteLength(v, 'utf8') <= 1024, 'must be at most 1,024 bytes (UTF-8)')
      .optional(),
  ),
  LOGIN_HASH_QUEUE_MAX: z.coerce
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1 (sign-ins waiting for a password hash per web process)')
    .max(1000, 'must be at most 1000 (each waiting sign-in may wait up to 10 s)')
    .default(8),
});

type AuthEnv = z.infer<typeof authEnv>;

export function refineAuthEnv(env: AuthEnv, ctx: IssueSink): void {
  if (env.ADMIN_PASSWORD && !env.ADMIN_EMAIL) {
    ctx.addIssue({
      code: 'custom',
      path: ['ADMIN_EMAIL'],
      message: 'is required when ADMIN_PASSWORD is set',
    });
  }
}

export interface AuthConfig {
  bootstrapApiKey: string | undefined;
  admin: { email: string; password: string | undefined } | undefined;
  /**
   * Sign-ins waiting for a password hash per web process, at most (two hash at once); beyond it, and for a
   * second attempt from a network that has one waiting, 503 + Retry-After (lib/auth/hash_slots.ts).
   */
  loginHashQueueMax: number;
}

export function authConfig(e: AuthEnv): AuthConfig {
  return {
    bootstrapApiKey: e.BOOTSTRAP_API_KEY,
    admin: e.ADMIN_EMAIL ? { email: e.ADMIN_EMAIL.toLowerCase(), password: e.ADMIN_PASSWORD } : undefined,
    loginHashQueueMax: e.LOGIN_HASH_QUEUE_MAX,
  };
}
