/** Unit tests of the file resolver: resolution against the referring file, root confinement, symlinks, missing files. */
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolSchema } from '../../src/protocol/types.js';
import { FileResolver } from '../../src/resolvers/file-resolver.js';
import type { ResolveContext } from '../../src/resolvers/resolver.js';
import { type RegisteredResolver, type TempDir, expectDelegateError, makeTempDir, registered, validDocument, writeDocument } from './helpers.js';

const tool: ToolSchema = { type: 'object', properties: {} };

describe('FileResolver', () => {
  let dir: TempDir;
  let root: string;
  let resolver: RegisteredResolver<FileResolver>;
  /** A context whose referring document is `<root>/<relativeBase>`. */
  const from = (relativeBase: string | undefined): ResolveContext => ({
    ...(relativeBase === undefined ? {} : { base: join(root, relativeBase) }),
    toolName: 't',
    tool,
  });

  beforeAll(async () => {
    dir = await makeTempDir('file-resolver-');
    root = join(dir.path, 'root');
    await writeDocument(join(root, 'top.json'), validDocument('top'));
    await writeDocument(join(root, 'a', 'sibling.json'), validDocument('sibling'));
    await writeDocument(join(root, 'a', 'b', 'deep.json'), validDocument('deep'));
    await writeDocument(join(root, 'a', 'no-name.json'), validDocument());
    await writeDocument(join(root, 'a', 'notes.txt'), 'not json');
    await mkdir(join(root, 'a', 'folder.json'));
    await writeDocument(join(dir.path, 'outside', 'secret.json'), validDocument('secret'));
    await writeDocument(join(dir.path, 'root-evil', 'x.json'), validDocument('prefix-sibling'));
    await symlink(join(dir.path, 'outside'), join(root, 'link-out'));
    await symlink(join(root, 'a'), join(root, 'link-in'));
    await symlink(join(dir.path, 'outside', 'secret.json'), join(root, 'secret-link.json'));
    await symlink(join(root, 'top.json'), join(root, 'a', 'top-link.json'));
    await symlink(join(root, 'nowhere.json'), join(root, 'dangling.json'));
    resolver = registered(new FileResolver({ root }));
  });
  afterAll(async () => {
    await dir.cleanup();
  });

  it('resolves a relative path against the folder of the referring file', async () => {
    const resolved = await resolver.resolve('./sibling.json', from('a/main.json'));
    expect(resolved).toMatchObject({ name: 'sibling', location: join(root, 'a', 'sibling.json'), trusted: true });
    expect((await resolver.resolve('b/deep.json', from('a/main.json'))).name).toBe('deep');
  });

  it('resolves against the root when the referring document is in memory', async () => {
    expect((await resolver.resolve('a/sibling.json', from(undefined))).name).toBe('sibling');
  });

  it('names a document without meta.name after its file', async () => {
    expect((await resolver.resolve('./no-name.json', from('a/main.json'))).name).toBe('no-name');
  });

  it('allows ".." while the path stays inside the root', async () => {
    expect((await resolver.resolve('../top.json', from('a/main.json'))).name).toBe('top');
    expect((await resolver.resolve('../../a/./b/../sibling.json', from('a/b/main.json'))).name).toBe('sibling');
  });

  it('forbids ".." that escapes the root, naming the reference and the root', async () => {
    const error = await expectDelegateError(resolver.resolve('../outside/secret.json', from('main.json')), 'delegate_forbidden');
    expect(error.message).toContain('../outside/secret.json');
    expect(error.message).toContain(root);
    await expectDelegateError(resolver.resolve('../../../../../../etc/passwd.json', from('a/b/main.json')), 'delegate_forbidden');
    // A sibling folder whose name starts with the root's name is still outside.
    await expectDelegateError(resolver.resolve('../root-evil/x.json', from('main.json')), 'delegate_forbidden');
  });

  it('forbids absolute paths, backslashes, NUL bytes and any percent sign', async () => {
    const forbidden = [
      join(root, 'top.json'),
      '/etc/passwd.json',
      'C:/top.json',
      '..\\outside\\secret.json',
      'a\\sibling.json',
      'top.json\0.json',
      '%2e%2e/outside/secret.json',
      '..%2foutside%2fsecret.json',
      '..%5coutside%5csecret.json',
      'a/sibling%2ejson',
      '',
    ];
    for (const reference of forbidden) {
      const error = await expectDelegateError(resolver.resolve(reference, from('main.json')), 'delegate_forbidden');
      expect(error.data.reference).toBe(reference);
    }
  });

  it('only loads .json files', async () => {
    const error = await expectDelegateError(resolver.resolve('./notes.txt', from('a/main.json')), 'delegate_forbidden');
    expect(error.message).toContain('.json');
  });

  it('forbids a symlink whose real path leaves the root', async () => {
    const error = await expectDelegateError(resolver.resolve('./secret-link.json', from('main.json')), 'delegate_forbidden');
    expect(error.message).toContain('symbolic link');
    await expectDelegateError(resolver.resolve('./link-out/secret.json', from('main.json')), 'delegate_forbidden');
  });

  it('allows symlinks that stay inside the root, keeping the path as written as the location', async () => {
    const throughFolder = await resolver.resolve('./link-in/sibling.json', from('main.json'));
    expect(throughFolder).toMatchObject({ name: 'sibling', location: join(root, 'link-in', 'sibling.json') });
    expect((await resolver.resolve('./top-link.json', from('a/main.json'))).name).toBe('top');
  });

  it('reports a missing file as delegate_not_found naming the reference and the resolved path', async () => {
    const error = await expectDelegateError(resolver.resolve('./missing.json', from('a/main.json')), 'delegate_not_found');
    expect(error.message).toContain('./missing.json');
    expect(error.message).toContain(join(root, 'a', 'missing.json'));
    await expectDelegateError(resolver.resolve('./dangling.json', from('main.json')), 'delegate_not_found');
    await expectDelegateError(resolver.resolve('./top.json/inner.json', from('main.json')), 'delegate_not_found');
  });

  it('reports a folder named like a document as delegate_not_found', async () => {
    await expectDelegateError(resolver.resolve('./folder.json', from('a/main.json')), 'delegate_not_found');
  });

  it('accepts relative references from files and in-memory documents only', () => {
    expect(resolver.accepts('./x.json', from('main.json'))).toBe(true);
    expect(resolver.accepts('/etc/x.json', from('main.json'))).toBe(true);
    expect(resolver.accepts('./x.json', from(undefined))).toBe(true);
    expect(resolver.accepts('./x.json', { base: 'https://example.com/a.json', toolName: 't', tool })).toBe(false);
    expect(resolver.accepts('./x.json', { base: 'anonymous:t', toolName: 't', tool })).toBe(false);
    expect(resolver.accepts('file:///etc/x.json', from('main.json'))).toBe(false);
    expect(resolver.accepts('anonymous', from('main.json'))).toBe(false);
  });

  it('reports a missing root folder as delegate_not_found', async () => {
    const lost = new FileResolver({ root: join(dir.path, 'no-such-root') });
    await expectDelegateError(lost.resolve('./x.json', { toolName: 't', tool }), 'delegate_not_found');
  });

  it('shares one read among the children resolving the same reference at once, and reads anew after it (DEL-29)', async () => {
    const bare = new FileResolver({ root });
    const path = join(root, 'a', 'changing.json');
    await writeDocument(path, validDocument('first'));
    const together = await Promise.all(Array.from({ length: 20 }, () => bare.resolve('./changing.json', from('a/main.json'))));
    expect(new Set(together.map((located) => located.content)).size).toBe(1);
    await writeDocument(path, validDocument('second'));
    const after = await bare.resolve('./changing.json', from('a/main.json'));
    expect(after.content).not.toBe(together[0]!.content);
    expect(String(after.content)).toContain('second');
  });

  it('lets a cancelled child stop waiting on a shared read without failing the others', async () => {
    const bare = new FileResolver({ root });
    const cancelled = new AbortController();
    const waiting = bare.resolve('./top.json', { ...from('main.json'), signal: cancelled.signal });
    const other = bare.resolve('./top.json', from('main.json'));
    cancelled.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(String((await other).content)).toContain('top');
  });
});
