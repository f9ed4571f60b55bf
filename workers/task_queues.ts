/** The default task queue (TEMPORAL_TASK_QUEUE overrides it); tests use a unique queue each. */
export const DEFAULT_TASK_QUEUE = 'lifeline';
