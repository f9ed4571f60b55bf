// Preloaded (`node --import`) into a spawned entry a test watches: every module the process resolves whose URL
// contains MODULE_WATCH_PATTERN is appended to the file MODULE_WATCH_FILE as `{importer} -> {module}`, by import or
// by require, so a test can tell which packages a real process loaded and who asked for them (node:module's
// synchronous hooks see both, in this thread).
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const file = process.env.MODULE_WATCH_FILE;
const pattern = process.env.MODULE_WATCH_PATTERN;
if (!file || !pattern) throw new Error('module_watch.mjs needs MODULE_WATCH_FILE and MODULE_WATCH_PATTERN');
appendFileSync(file, '');

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (resolved.url.includes(pattern))
      appendFileSync(file, `${context.parentURL ?? '(entry)'} -> ${resolved.url}\n`);
    return resolved;
  },
});
