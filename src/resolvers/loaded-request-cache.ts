/** Delegate documents parsed and validated once per process: kept by (handlers, location, exact text) and frozen, so children share one (DEL-29). */
import type { HandlerRegistry } from '../protocol/messages/handlers.js';
import { parseRequestText, type LoadedRequest } from '../protocol/messages/load-request.js';

/** How many locations are kept per handler registry; the least recently used is dropped first. */
export const LOADED_REQUEST_CACHE_SIZE = 256;

interface Entry {
  text: string;
  revision: number;
  loaded: LoadedRequest;
}

const byHandlers = new WeakMap<HandlerRegistry, Map<string, Entry>>();

/**
 * Parses and validates Request `text` from `location` like `parseRequestText`, but only the first
 * time this exact text is met at this location with these handlers (and no handler registered
 * since): later calls return the same loaded document, deeply frozen so no run can change what
 * another shares. A changed text is a new document; a text with problems is never kept, so it
 * fails again, naming its location and pointers, every time it is read.
 */
export function loadRequestText(text: string, location: string, handlers: HandlerRegistry): LoadedRequest {
  let entries = byHandlers.get(handlers);
  if (entries === undefined) {
    entries = new Map();
    byHandlers.set(handlers, entries);
  }
  const hit = entries.get(location);
  entries.delete(location);
  if (hit !== undefined && hit.text === text && hit.revision === handlers.revision) {
    entries.set(location, hit);
    return hit.loaded;
  }
  const loaded = parseRequestText(text, location, handlers);
  deepFreeze(loaded.document);
  entries.set(location, { text, revision: handlers.revision, loaded });
  if (entries.size > LOADED_REQUEST_CACHE_SIZE) entries.delete(entries.keys().next().value as string);
  return loaded;
}

/** Freezes `value` and everything reachable from it (a parsed document is a tree: no cycles). */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
