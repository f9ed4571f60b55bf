import type { ApiKeyRow } from '../lib/stores/api_key_store.ts';

/** Per-request values routes share through Hono's context. */
export interface AppEnv {
  Variables: {
    requestId: string;
    apiKey: ApiKeyRow;
  };
}
