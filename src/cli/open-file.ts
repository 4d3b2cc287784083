/** Opening a file with the system's opener (`xdg-open`, `open`, `start`), when the machine has one (spec/viewer.md VIEW-9). */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The opener command of a platform, with the arguments before the file. */
export function openerFor(platform: NodeJS.Platform): { command: string; args: string[] } {
  if (platform === 'darwin') return { command: 'open', args: [] };
  // `start` is a cmd built-in; its first quoted argument is a window title.
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""'] };
  return { command: 'xdg-open', args: [] };
}

/** The executable file `command` names on `PATH`, or undefined. */
export function findOnPath(command: string, env: Record<string, string | undefined>): string | undefined {
  for (const folder of (env.PATH ?? '').split(delimiter)) {
    if (folder === '') continue;
    const candidate = join(folder, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/**
 * Opens `file` with the platform's opener, detached so the command does not wait for the
 * browser; resolves to the opener's path, or undefined when the machine has none on `PATH` or it
 * could not be started.
 */
export async function openFile(
  file: string,
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
): Promise<string | undefined> {
  const opener = openerFor(platform);
  const found = findOnPath(platform === 'win32' ? 'cmd.exe' : opener.command, env);
  if (found === undefined) return undefined;
  return new Promise((resolve) => {
    const child = spawn(found, [...opener.args, file], { detached: true, stdio: 'ignore', env: env as NodeJS.ProcessEnv });
    child.once('error', () => resolve(undefined));
    child.once('spawn', () => {
      child.unref();
      resolve(found);
    });
  });
}
