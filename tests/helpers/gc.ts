// V8's gc() for tests that check what stays reachable (WeakRef after a collection), or measure a heap after one.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A full garbage collection, now (exposes V8's gc() to this process on first use). */
export function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
