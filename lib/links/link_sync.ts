/**
 * Hands a changed link to its sync workflow (`sync:{code}`), which brings the serving store, caches and vendors
 * in line with Postgres. The web tier's WorkflowGateway and the activities' Temporal client both provide it
 * (lib/temporal); lib code that changes links asks for it rather than for Temporal.
 */
export interface LinkSyncRequester {
  syncLink(code: string, reason: string): Promise<unknown>;
}
