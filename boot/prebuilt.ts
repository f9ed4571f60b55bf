// What the production build (`npm run build`, scripts/build.ts) made ahead of time, so the built entries do no
// bundling at start: the workflow bundle the worker loads, and static/ with the islands' browser bundle. Run from
// source (tsx) nothing is prebuilt: the worker bundles workflows/ and the web tier the islands as they start.
//
// The build defines LIFELINE_PREBUILT; paths are relative to this file's place in the source tree, which the
// build keeps as every module's import.meta.url (scripts/build.ts says why), so dist/ is found beside it.
import { fileURLToPath } from 'node:url';

declare const LIFELINE_PREBUILT: boolean | undefined;

export interface Prebuilt {
  /** The workflow bundle (Temporal's bundleWorkflowCode) the worker loads instead of bundling workflows/. */
  workflowBundlePath: string;
  /** The same with the tracing workflow interceptors, for a worker with OTEL_EXPORTER_OTLP_* set (ADR 0072). */
  tracedWorkflowBundlePath: string;
  /** static/ with islands.js built from islands/. */
  staticDir: string;
}

export const prebuilt: Prebuilt | undefined =
  typeof LIFELINE_PREBUILT !== 'undefined' && LIFELINE_PREBUILT
    ? {
        workflowBundlePath: fileURLToPath(new URL('../dist/workflow-bundle.js', import.meta.url)),
        tracedWorkflowBundlePath: fileURLToPath(
          new URL('../dist/workflow-bundle-traced.js', import.meta.url),
        ),
        staticDir: fileURLToPath(new URL('../dist/static', import.meta.url)),
      }
    : undefined;
