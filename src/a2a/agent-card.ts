/** Reads an A2A agent's card under the URL delegates' host rules (DEL-32) and finds what a tool needs of it: name, schemas, streaming. */
import { DelegateError, RequestError } from '../protocol/errors.js';
import { parseJson } from '../protocol/json.js';
import { schemaProblem } from '../protocol/schemas.js';
import type { JsonSchema } from '../protocol/types.js';
import { isJsonObject } from '../protocol/types.js';
import type { ResolveContext } from '../resolvers/resolver.js';
import type { UrlResolver } from '../resolvers/url-resolver.js';
import { a2aLocation, type A2aLocation, decodeText } from '../resolvers/reference-forms.js';

/** What the delegation needs of an agent card (DEL-32, DEL-33). */
export interface AgentCardFacts {
  /** The reference as written and where it leads. */
  reference: string;
  location: A2aLocation;
  /** The card as fetched, for the A2A SDK's client. */
  card: Record<string, unknown>;
  /** The card's `name`, else its base URL. */
  name: string;
  description: string;
  /** The input schema of the skill used (DEL-33), when the card gives one. */
  inputSchema?: JsonSchema;
  /** Its output schema, when the card gives one. */
  outputSchema?: JsonSchema;
  /** True when the card says the agent streams (`capabilities.streaming`). */
  streaming: boolean;
}

/** The A2A location a reference names, or `delegate_not_found` saying which forms are understood (DEL-31). */
export function locateAgent(reference: string): A2aLocation {
  const location = a2aLocation(reference);
  if (!location) {
    throw new DelegateError(
      'delegate_not_found',
      `Delegate "${reference}" was not found: expected an A2A agent as "a2a+https://host/path" (its base URL) or "https://host/path/.well-known/agent-card.json" (its card).`,
      { reference },
    );
  }
  return location;
}

/**
 * Fetches and reads the card of the agent `reference` names (DEL-32): through the URL resolver, so
 * its host allow-list, redirects refused, JSON media type, size cap, timeouts and ETag cache are
 * the URL delegates' (DEL-5). A card that is not a JSON object, or whose schemas are not JSON
 * Schemas, is `invalid_request` naming the card and the pointer.
 */
export async function readAgentCard(reference: string, urls: UrlResolver, context: ResolveContext): Promise<AgentCardFacts> {
  const location = locateAgent(reference);
  const located = await urls.resolve(location.card, context).catch((error: unknown) => {
    // The URL resolver's own error, its code and data kept, said of the agent's card.
    if (!(error instanceof DelegateError)) throw error;
    throw new DelegateError(error.code, `The card of the A2A agent "${reference}" could not be read: ${error.message}`, error.data, { cause: error });
  });
  const parsed = parseJson(decodeText(typeof located.content === 'string' ? Buffer.from(located.content) : located.content));
  const problem = (pointer: string, message: string): never => {
    throw new RequestError([{ document: location.card, pointer, message }]);
  };
  if (!parsed.ok) return problem('', `Expected the agent card of "${reference}" to be JSON: ${parsed.message}`);
  const card = parsed.value;
  if (!isJsonObject(card)) return problem('', `Expected the agent card of "${reference}" to be a JSON object.`);
  const schemas = findSchemas(card, problem);
  const capabilities = isJsonObject(card.capabilities) ? card.capabilities : {};
  return {
    reference,
    location,
    card,
    name: typeof card.name === 'string' && card.name !== '' ? card.name : location.base,
    description: typeof card.description === 'string' ? card.description : '',
    ...schemas,
    streaming: capabilities.streaming === true,
  };
}

/**
 * The schemas of the card (DEL-33): `inputSchema` and `outputSchema` of its first skill that has
 * either, else the `params` of its first extension (`capabilities.extensions`) that has either.
 */
function findSchemas(
  card: Record<string, unknown>,
  problem: (pointer: string, message: string) => never,
): { inputSchema?: JsonSchema; outputSchema?: JsonSchema } {
  const places: { holder: Record<string, unknown>; pointer: string }[] = [];
  const skills = Array.isArray(card.skills) ? card.skills : [];
  skills.forEach((skill, index) => {
    if (isJsonObject(skill)) places.push({ holder: skill, pointer: `/skills/${index}` });
  });
  const extensions = isJsonObject(card.capabilities) && Array.isArray(card.capabilities.extensions) ? card.capabilities.extensions : [];
  extensions.forEach((extension, index) => {
    if (isJsonObject(extension) && isJsonObject(extension.params))
      places.push({ holder: extension.params, pointer: `/capabilities/extensions/${index}/params` });
  });
  const place = places.find(({ holder }) => holder.inputSchema !== undefined || holder.outputSchema !== undefined);
  if (!place) return {};
  const schemas: { inputSchema?: JsonSchema; outputSchema?: JsonSchema } = {};
  for (const key of ['inputSchema', 'outputSchema'] as const) {
    const schema = place.holder[key];
    if (schema === undefined) continue;
    const wrong = schemaProblem(schema);
    if (wrong) problem(`${place.pointer}/${key}`, wrong);
    schemas[key] = schema as JsonSchema;
  }
  return schemas;
}
