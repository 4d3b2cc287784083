/** The A2A agent card of a served Request (A2A-2): its name and description, its schemas, and where its JSON-RPC endpoint is. */
import type { AgentCard } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { AGENT_CARD_PATH } from '../resolvers/reference-forms.js';
import type { CatalogEntry } from '../server/validate-document.js';

/** Where every A2A agent of the server lives: `/a2a/<path>` (A2A-1). */
export const A2A_PREFIX = '/a2a';
/** Where an agent's card is, below its base URL (A2A-2): where a delegate reads it too (DEL-31). */
export const CARD_PATH = AGENT_CARD_PATH;
/** The card extension whose params carry the Request's input and output schemas (A2A-2). */
export const SCHEMAS_EXTENSION = 'https://delegate-run.dev/a2a/request-schemas';
/** The media type of a JSON data part. */
export const JSON_MEDIA_TYPE = 'application/json';
/** The protocol version of the A2A 0.3 clients the SDK's compatibility layer answers (A2A-10). */
const LEGACY_VERSION = '0.3';

/** The URL path of a Request's agent: `/a2a/` and the document's URL path without `.json` (A2A-1). */
export function agentPathOf(entry: Pick<CatalogEntry, 'path'>): string {
  return `${A2A_PREFIX}${entry.path.slice(0, -'.json'.length)}`;
}

/**
 * The card of the agent a Request is (A2A-2): `meta.name` and `meta.description`, one skill named
 * after it taking a JSON data part or text and giving a JSON data part, its declared input and
 * output schemas (`inputSchema`, `outputSchema`) in the params of the {@link SCHEMAS_EXTENSION} extension, streaming on, and one
 * JSON-RPC interface at `origin` + the agent's path in the SDK's protocol version, mirrored for
 * 0.3 clients (A2A-10). The fields a 0.3 card has at its top (`url`, `preferredTransport`,
 * `protocolVersion`) are set too, as the SDK's own card for 0.3 clients carries them beside the
 * 1.0 interfaces, so one card serves both.
 */
export function agentCardOf(entry: CatalogEntry, origin: string, version: string): AgentCard & Record<string, unknown> {
  const url = `${origin}${agentPathOf(entry)}`;
  const description = entry.description ?? `Runs the Request ${entry.path} of this server.`;
  const inputModes = [JSON_MEDIA_TYPE, 'text/plain'];
  const outputModes = [JSON_MEDIA_TYPE];
  return {
    name: entry.name,
    description,
    version,
    supportedInterfaces: duplicateInterfacesForLegacy([{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }], ['JSONRPC']),
    provider: undefined,
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extendedAgentCard: false,
      extensions: [
        {
          uri: SCHEMAS_EXTENSION,
          description: 'The JSON schemas of the input the Request takes (no inputSchema: any input) and of the output it gives.',
          required: false,
          // The keys a delegate reads (DEL-33); an input schema of null (any input) is left out.
          params: { ...(entry.input === null ? {} : { inputSchema: entry.input }), outputSchema: entry.output },
        },
      ],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: inputModes,
    defaultOutputModes: outputModes,
    skills: [
      {
        id: entry.name,
        name: entry.name,
        description: `${description} Send the input as a JSON data part (or as text); the output comes back as a JSON data part.`,
        tags: ['delegate-run', 'request'],
        examples: [],
        inputModes,
        outputModes,
        securityRequirements: [],
      },
    ],
    signatures: [],
    url,
    preferredTransport: 'JSONRPC',
    protocolVersion: LEGACY_VERSION,
  };
}
