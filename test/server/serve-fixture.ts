/** A throwaway served folder for the server tests: valid, invalid, hidden and non-JSON files, symlinks in and out. */
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The minimal valid Request document, written with odd spacing so "bytes as stored" is visible. */
export const HELLO = '{ "context": [{"type":"system","text":"You are helpful."}],\n  "schema": {"type":"string"} }\n';

/** A documented Request with a template input slot. */
export const PRODUCER = JSON.stringify(
  {
    meta: { name: 'producer', description: 'Produces a track.' },
    context: [
      { type: 'system', text: 'You produce music.' },
      { type: 'input', schema: { type: 'object', properties: { genre: { type: 'string' } } } },
    ],
    schema: { type: 'object', properties: { track: { type: 'string' } } },
  },
  null,
  2,
);

/** A valid document whose input is given, not a slot (so the catalog's `input` is null). */
export const DEEP = JSON.stringify({
  context: [
    { type: 'system', text: 'Deep.' },
    { type: 'input', input: { topic: 'x' } },
  ],
  schema: { type: 'number' },
});

/** A valid document outside the served folder: must never be served. */
export const SECRET = '{"context":[{"type":"system","text":"SECRET OUTSIDE"}],"schema":{"type":"string"}}';
/** A valid document in a dotfile inside the folder: must never be served. */
export const HIDDEN = '{"context":[{"type":"system","text":"HIDDEN DOTFILE"}],"schema":{"type":"string"}}';
/** A valid document inside a dot-folder: must never be served. */
export const HIDDEN_DIR_DOC = '{"context":[{"type":"system","text":"HIDDEN FOLDER"}],"schema":{"type":"string"}}';

/** The served folder and its sibling outside it. */
export interface ServeFixture {
  /** Real path of the temporary base holding `root` and `outside`. */
  base: string;
  /** The served folder. */
  root: string;
  /** A folder beside the served one. */
  outside: string;
  /** Every file's bytes that may legitimately be served (regular, non-hidden `.json` inside root). */
  servable: Buffer[];
  /** Removes everything. */
  remove(): Promise<void>;
}

/**
 * Builds:
 * ```
 * base/outside/secret.json                 valid, outside the folder
 * base/root/hello.json                     valid
 * base/root/my doc.json                    valid (a name that needs percent-encoding)
 * base/root/music/producer.json            valid, meta + input slot
 * base/root/music/nested/deep.json         valid, input given
 * base/root/broken.json                    fails validation (no schema)
 * base/root/garbled.json                   not JSON
 * base/root/notes.txt, readme.md           not .json
 * base/root/.secret.json, .hidden/doc.json hidden
 * base/root/folder.json/                   a folder named like a document
 * base/root/link-in.json -> hello.json     symlink inside
 * base/root/link-out.json -> ../outside/secret.json
 * base/root/link-dot.json -> .secret.json
 * base/root/link-txt.json -> notes.txt
 * base/root/linkdir-in -> music            folder symlink inside
 * base/root/linkdir-out -> ../outside      folder symlink out
 * base/root/linkdir-hidden -> .hidden      folder symlink to a dot-folder
 * base/root/loop -> .                      a cycle
 * ```
 */
export async function createServeFixture(): Promise<ServeFixture> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'delegate-serve-')));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  await mkdir(join(root, 'music', 'nested'), { recursive: true });
  await mkdir(join(root, '.hidden'), { recursive: true });
  await mkdir(join(root, 'folder.json'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.json'), SECRET);
  await writeFile(join(root, 'hello.json'), HELLO);
  await writeFile(join(root, 'my doc.json'), HELLO.replace('helpful', 'spacious'));
  await writeFile(join(root, 'music', 'producer.json'), PRODUCER);
  await writeFile(join(root, 'music', 'nested', 'deep.json'), DEEP);
  await writeFile(join(root, 'broken.json'), '{"context":[{"type":"system","text":"No schema."}]}');
  await writeFile(join(root, 'garbled.json'), '{"context": [\n  oops ]}');
  await writeFile(join(root, 'notes.txt'), HELLO);
  await writeFile(join(root, 'readme.md'), '# not served');
  await writeFile(join(root, '.secret.json'), HIDDEN);
  await writeFile(join(root, '.hidden', 'doc.json'), HIDDEN_DIR_DOC);
  await symlink('hello.json', join(root, 'link-in.json'));
  await symlink(join('..', 'outside', 'secret.json'), join(root, 'link-out.json'));
  await symlink('.secret.json', join(root, 'link-dot.json'));
  await symlink('notes.txt', join(root, 'link-txt.json'));
  await symlink('music', join(root, 'linkdir-in'));
  await symlink(join('..', 'outside'), join(root, 'linkdir-out'));
  await symlink('.hidden', join(root, 'linkdir-hidden'));
  await symlink('.', join(root, 'loop'));
  const servable = await Promise.all(
    ['hello.json', 'my doc.json', 'music/producer.json', 'music/nested/deep.json', 'broken.json', 'garbled.json'].map((path) => readFile(join(root, path))),
  );
  return { base, root, outside, servable, remove: () => rm(base, { recursive: true, force: true }) };
}
