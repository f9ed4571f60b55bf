/**
 * Whether this process is shutting down. Set first on SIGTERM (boot/shutdown.ts), so that /readyz answers 503 and
 * load balancers stop sending work while the process still serves what is in flight; /livez stays 200 meanwhile
 * (an orchestrator must not kill a process for draining).
 */
export interface DrainState {
  readonly draining: boolean;
  /** Since when (epoch ms) the process drains; undefined while it serves normally. */
  readonly since: number | undefined;
  startDraining(): void;
}

/** A process's drain flag, off until `startDraining()`. */
export function createDrainState(): DrainState {
  let since: number | undefined;
  return {
    get draining() {
      return since !== undefined;
    },
    get since() {
      return since;
    },
    startDraining() {
      since ??= Date.now();
    },
  };
}
