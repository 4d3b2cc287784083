/** Validating served documents and describing the valid ones for the catalog (the handler's document cache keeps each verdict, SERVE-11). */
import { RequestError, type Problem } from '../protocol/errors.js';
import type { HandlerRegistry } from '../protocol/messages/handlers.js';
import { parseRequestText } from '../protocol/messages/load-request.js';
import { declaredInputSchema } from '../protocol/messages/input.js';
import type { JsonSchema, RequestDocument } from '../protocol/types.js';

/** One valid document as the catalog (`GET /`) lists it. */
export interface CatalogEntry {
  /** The URL path a GET on the server answers with this document, e.g. `/music/producer.json` or `/my%20song.json`. */
  path: string;
  /** The name its runs carry: `meta.name`, else the file name without `.json`. */
  name: string;
  /** `meta.description`, or null. */
  description: string | null;
  /** The declared input schema: the `schema` of the first template input slot that has one, or null. */
  input: JsonSchema | null;
  /** The document's output schema. */
  output: JsonSchema;
}

/** The verdict on one document: its catalog entry but for the path (the handler knows the URL), or every problem found (located by request path). */
export type DocumentValidation = { ok: true; entry: Omit<CatalogEntry, 'path'> } | { ok: false; problems: Problem[] };

/**
 * Validates the bytes of the document served at `path` (`/`-rooted, decoded). Problems name the
 * document by that path, never by where the file lies on the server's disk.
 */
export function validateDocument(path: string, bytes: Uint8Array, handlers: HandlerRegistry): DocumentValidation {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, problems: [{ document: path, pointer: '', message: 'Expected UTF-8 text, but the file holds bytes that are not UTF-8.' }] };
  }
  try {
    const loaded = parseRequestText(text, path, handlers);
    return { ok: true, entry: catalogEntry(loaded.name, loaded.document) };
  } catch (error) {
    if (!(error instanceof RequestError)) throw error;
    return { ok: false, problems: error.problems.map((problem) => ({ ...problem, document: path })) };
  }
}

function catalogEntry(name: string, document: RequestDocument): Omit<CatalogEntry, 'path'> {
  const description = document.meta?.description;
  return {
    name,
    description: typeof description === 'string' ? description : null,
    input: declaredInputSchema(document) ?? null,
    output: document.schema,
  };
}
