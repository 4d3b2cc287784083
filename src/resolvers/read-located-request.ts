/** Reading what a resolver located: the integrity pin checked, then the document parsed and validated, in one place for every resolver. */
import type { HandlerRegistry } from '../protocol/messages/handlers.js';
import { checkIntegrity, splitIntegrity } from './integrity.js';
import { loadRequestText } from './loaded-request-cache.js';
import { decodeText } from './reference-forms.js';
import type { LocatedRequest, ResolvedRequest } from './resolver.js';

/**
 * Reads the document a resolver located for `reference`: checks the reference's pin against the
 * exact content found (`delegate_forbidden` on a mismatch), then parses and validates the text with
 * `handlers` (a RequestError naming the location and each pointer) — once per exact text and
 * location (DEL-29): an unchanged document read again is the same frozen document.
 */
export function readLocatedRequest(reference: string, located: LocatedRequest, handlers: HandlerRegistry): ResolvedRequest {
  checkIntegrity(located.content, splitIntegrity(reference).pin, reference, located.location);
  const text = typeof located.content === 'string' ? located.content : decodeText(located.content);
  const loaded = loadRequestText(text, located.location, handlers);
  const resolved: ResolvedRequest = { location: loaded.location, name: located.name ?? loaded.name, document: loaded.document, trusted: located.trusted };
  if (located.registry !== undefined) resolved.registry = located.registry;
  return resolved;
}
