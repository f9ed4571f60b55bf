import type { createActivities } from './index.ts';

/** The activity interface workflows proxy (types only: workflows never import activity code). */
export type Activities = ReturnType<typeof createActivities>;
