// Temporal: the connection (every TEMPORAL_* variable, lib/shared/temporal_settings.ts), task queue and UI link.
import { z } from 'zod';
import { type TemporalSettings, temporalEnvShape } from '../temporal_settings.ts';
import { optionalHttpUrl } from './env_values.ts';

export { refineTemporalSettings as refineTemporalEnv } from '../temporal_settings.ts';

export const temporalEnv = z.object({
  // TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS / mTLS, API key, profile file (lib/shared/temporal_settings.ts).
  ...temporalEnvShape,
  // Not ending in the drainers' queue suffix (workflows/contract.ts): the worker polls `<queue>-drainers` beside it
  // (ADR 0099), and an activity finds its deployment's queue by taking that suffix off.
  TEMPORAL_TASK_QUEUE: z
    .string()
    .min(1)
    .refine((queue) => !queue.endsWith('-drainers'), {
      message: 'must not end in "-drainers": the worker polls "<queue>-drainers" beside it for its drainers',
    })
    .default('lifeline'),
  TEMPORAL_UI_URL: optionalHttpUrl,
});

export interface TemporalConfig {
  /**
   * Temporal: `address` and `namespace` as the environment gives them (TEMPORAL_ADDRESS unset: undefined); a
   * profile file may still name others, so processes connect with what boot/temporal_connection.ts resolves
   * from `settings` (every TEMPORAL_* variable, validated) and use its namespace.
   */
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    uiUrl: string | undefined;
    settings: TemporalSettings;
  };
}

export function temporalConfig(e: z.infer<typeof temporalEnv>): TemporalConfig {
  return {
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      uiUrl: e.TEMPORAL_UI_URL,
      settings: Object.fromEntries(
        Object.keys(temporalEnvShape).map((name) => [name, e[name as keyof typeof temporalEnvShape]]),
      ) as TemporalSettings,
    },
  };
}
