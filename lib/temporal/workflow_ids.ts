// Workflow IDs are business keys: a retry or a duplicate webhook finds the same workflow, never a second one.

/** The publish-time minting workflow of one article. */
export function getPublishWorkflowId(site: string, postId: number): string {
  return `publish:${site}:${postId}`;
}

/** The workflow that brings every replica of one link up to date with Postgres. */
export function getSyncWorkflowId(code: string): string {
  return `sync:${code}`;
}
