// Preloaded (`node --import`) into a spawned server a test measures: on the IPC message {type: 'heap-probe'} it
// collects garbage twice and answers with what stays reachable, so a test reads the heap of the real process
// rather than its own.
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

process.on('message', (message) => {
  if (message?.type !== 'heap-probe') return;
  gc();
  gc();
  process.send?.({ type: 'heap', id: message.id, usedBytes: getHeapStatistics().used_heap_size });
});
