// Preloaded into every node:test child by scripts/test.ts. A child reports its tests to the parent over a pipe,
// and under --test-force-exit its process.exit() dropped report frames still queued on that non-blocking pipe:
// the parent counted fewer tests than had run, and for a failing file named the file but not the test
// (nodejs/node#64833, open). With stdout blocking, every frame is written before the exit.
const handle = process.stdout._handle;
if (!process.stdout.isTTY && typeof handle?.setBlocking === 'function') handle.setBlocking(true);
