/** The executables' shared entry check: whether a module is the script node was asked to run. */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * True when `moduleUrl` (the module's `import.meta.url`) is the script node was asked to run, so
 * importing an executable's module (tests do) never starts it. npm bin links are symbolic links,
 * hence the real path.
 */
export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}
