/** Reading a document file: the file's text read from disk, then checked by the one document reader (ERR-7). */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { type DocumentReading, readDocument } from '../protocol/read-document.js';

function unreadable(path: string, error: unknown): DocumentReading<never> {
  const reason = error instanceof Error ? error.message : String(error);
  return { ok: false, problems: [{ document: path, pointer: '', message: `The file cannot be read: ${reason}` }] };
}

/** Reads and checks a document file: an unreadable file is one problem naming it. */
export async function readDocumentFile<T = unknown>(path: string, schema?: string): Promise<DocumentReading<T>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return unreadable(path, error);
  }
  return readDocument<T>(text, path, schema);
}

/** Synchronous `readDocumentFile`, for callers that must have the document at once. */
export function readDocumentFileSync<T = unknown>(path: string, schema?: string): DocumentReading<T> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return unreadable(path, error);
  }
  return readDocument<T>(text, path, schema);
}
