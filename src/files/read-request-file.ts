/** Reading a Request file for `Runtime.load`: its text, or a RequestError naming the path. */
import { readFile } from 'node:fs/promises';
import { RequestError } from '../protocol/errors.js';

/**
 * Reads the text of the Request file at `path`: the file system's `RequestFileReader`. A missing file is
 * `delegate_not_found`; any other unreadable path (a folder, no permission) `invalid_request`.
 */
export async function readRequestFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = code === 'ENOENT' ? 'Expected a Request file here, but there is none.' : `Expected a readable file: ${(error as Error).message}.`;
    throw new RequestError([{ document: path, pointer: '', message }], code === 'ENOENT' ? 'delegate_not_found' : 'invalid_request');
  }
}
