// Loaded with `node --import`: appends the path of every module the process loads, ES module or CommonJS, to the file RECORD_MODULES names.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const target = process.env.RECORD_MODULES;
if (target) {
  // ES modules: a load hook (it runs on the loaders' thread, so it writes the file itself).
  const hook = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(target)}, url + '\\n');
  return next(url, context);
}`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
  // CommonJS: every require, createRequire's included, goes through Module._load.
  const load = Module._load;
  Module._load = function recorded(request, parent, isMain) {
    if (!request.startsWith('node:') && !Module.isBuiltin(request)) {
      try {
        appendFileSync(target, `${Module._resolveFilename(request, parent, isMain)}\n`);
      } catch {
        // A module that cannot be resolved fails in the load below, as it would have.
      }
    }
    return load.apply(this, [request, parent, isMain]);
  };
}
