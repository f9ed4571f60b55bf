// Postgres: where it is (unset: `npm start`'s embedded one) and how many connections each process holds.
import { z } from 'zod';
import { optionalString } from './env_values.ts';

export const databaseEnv = z.object({
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional(),
  ),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
});

export interface DatabaseConfig {
  databaseUrl: string | undefined;
  databasePoolSize: number;
}

export function databaseConfig(e: z.infer<typeof databaseEnv>): DatabaseConfig {
  return { databaseUrl: e.DATABASE_URL, databasePoolSize: e.DATABASE_POOL_SIZE };
}
