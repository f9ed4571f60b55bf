// The one workflowsPath module: every workflow the worker runs is exported here.
export { publishPostWorkflow } from './publish_post.ts';
export { syncLinkWorkflow } from './sync_link.ts';
