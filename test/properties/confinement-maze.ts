/** The folder tree the confinement properties walk (DEL-4, ATT-2): a root with nested folders, a folder outside it, and symlinks in and out of the root. */
import { mkdir, symlink } from 'node:fs/promises';
import { extname, join } from 'node:path';

/** The files of a maze, named by the property that walks it. */
export interface MazeFiles {
  /** The file every folder of the root holds, and the outside folder too (`deck.pdf`). */
  file: string;
  /** The file only the outside folder holds (`secret.pdf`). */
  secret: string;
  /** Writes one file; `inside` says whether it lies inside the root. */
  write(path: string, inside: boolean): Promise<void>;
}

/**
 * Builds under `base`: `root/`, `root/a/` and `root/a/b/`, each with `file` and the symlinks
 * `link-in` (to `root/a`), `link-out` (to the outside folder), `link-in<ext>` (to the root's `file`)
 * and `link-out<ext>` (to the outside `secret`); `outside/` with `file` and `secret`; and the
 * relative symlinks `root/a/b/link-up` (climbing to the root) and `root/a/link-above` (climbing
 * above it). Returns the root and the outside folder.
 */
export async function buildConfinementMaze(base: string, files: MazeFiles): Promise<{ root: string; outside: string }> {
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  const ext = extname(files.file);
  await mkdir(outside, { recursive: true });
  await files.write(join(outside, files.secret), false);
  await files.write(join(outside, files.file), false);
  for (const folder of [root, join(root, 'a'), join(root, 'a', 'b')]) {
    await mkdir(folder, { recursive: true });
    await files.write(join(folder, files.file), true);
    await symlink(join(root, 'a'), join(folder, 'link-in'));
    await symlink(outside, join(folder, 'link-out'));
    await symlink(join(root, files.file), join(folder, `link-in${ext}`));
    await symlink(join(outside, files.secret), join(folder, `link-out${ext}`));
  }
  await symlink('../..', join(root, 'a', 'b', 'link-up'));
  await symlink('../..', join(root, 'a', 'link-above'));
  return { root, outside };
}

/** Last segments of a path into the maze: its files, symlinked files, a missing one, and names that are not plain files. */
export function mazeLastSegments(files: Pick<MazeFiles, 'file' | 'secret'>): string[] {
  const ext = extname(files.file);
  return [files.file, files.secret, `link-in${ext}`, `link-out${ext}`, `missing${ext}`, '..', 'a', `${files.file}%00`, `..%2f${files.secret}`];
}
