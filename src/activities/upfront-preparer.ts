/** Up-front delegate resolution: before the first model call, delegates are loaded and their schemas merged into the tools. */
import { createRequire } from 'node:module';
import { RequestError, type Problem } from '../protocol/errors.js';
import { pointer } from '../protocol/json.js';
import type { LoadedRequest } from '../protocol/messages/load-request.js';
import type { RunPreparer } from '../protocol/run/runtime.js';
import type { RunOptions } from '../protocol/contracts.js';
import { metaConst } from '../protocol/tools/tools.js';
import type { JsonSchema, Message, ToolMessage, ToolSchema } from '../protocol/types.js';
import { isMetaProperty } from '../protocol/types.js';
import { declaredInputSchema } from '../protocol/messages/input.js';
import type { DelegateResolver } from './delegate.js';
import type { UrlResolver } from '../resolvers/url-resolver.js';
import { isA2aReference } from '../resolvers/reference-forms.js';
import type { ResolveContext } from '../resolvers/resolver.js';

// json-schema-merge-allof (CommonJS, lodash under it) is loaded by up-front resolution only (CLI-34).
const require = createRequire(import.meta.url);

/**
 * The contract of an up-front A2A delegate (DEL-33): its card's input and output schemas. A card
 * without an input schema leaves the tool's parameters as written; without an output schema, any
 * result is accepted.
 */
async function a2aContract(
  reference: string,
  urls: UrlResolver | undefined,
  context: ResolveContext,
): Promise<{ location: string; inputSchema: JsonSchema | undefined; outputSchema: JsonSchema | undefined }> {
  if (!urls)
    throw new RequestError([
      {
        document: context.base ?? '',
        pointer: '',
        message: `The tool "${context.toolName}" names an A2A agent, but this runtime has no URL resolver whose host rules it could follow.`,
      },
    ]);
  const { readAgentCard } = await import('../a2a/agent-card.js');
  const facts = await readAgentCard(reference, urls, context);
  return { location: facts.location.card, inputSchema: facts.inputSchema, outputSchema: facts.outputSchema };
}

/**
 * True when this tool's delegate is resolved up front in this run: the tool's own `_resolve`,
 * else the document's `config.resolve`, else the run's option (`--resolve`).
 */
export function resolvesUpfront(tool: ToolSchema, options: RunOptions, documentResolve?: 'runtime' | 'upfront'): boolean {
  const reference = metaConst(tool, '_delegate');
  if (typeof reference !== 'string' || reference === 'anonymous') return false;
  return (metaConst(tool, '_resolve') ?? documentResolve ?? options.resolve) === 'upfront';
}

/** The tool's own parameters as a standalone object schema (meta-properties left out). */
function parameterSchema(tool: ToolSchema): Record<string, unknown> {
  const properties = Object.fromEntries(Object.entries(tool.properties ?? {}).filter(([key]) => !isMetaProperty(key)));
  const required = (tool.required ?? []).filter((key) => !isMetaProperty(key));
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/**
 * Intersects the `type` keywords of merged schemas. Every integer is a number, so `integer` and
 * `number` meet in `integer` (json-schema-merge-allof's default calls them incompatible).
 * Returns undefined (the merge then fails) when no type is common.
 */
function mergeTypes(values: unknown[]): unknown {
  const sets = values.map((value) => (Array.isArray(value) ? value : [value]) as unknown[]);
  let common = sets[0] ?? [];
  for (const next of sets.slice(1)) {
    const integers = (common.includes('integer') && next.includes('number')) || (common.includes('number') && next.includes('integer'));
    common = [...new Set([...common.filter((type) => next.includes(type)), ...(integers ? ['integer'] : [])])];
  }
  if (common.length === 0) return undefined;
  return common.length === 1 ? common[0] : common;
}

/**
 * Merges a delegate's input schema into a tool's parameters (allOf simplified by
 * json-schema-merge-allof) and makes the delegate's output schema the tool's `_output`
 * contract. The merged parameters are strict: properties neither side declares are refused.
 * Throws when the schemas cannot be merged.
 */
export function mergeDelegateContract(tool: ToolSchema, inputSchema: JsonSchema | undefined, outputSchema: JsonSchema): ToolSchema {
  const parameters = parameterSchema(tool);
  const mergeAllOf = require('json-schema-merge-allof') as typeof import('json-schema-merge-allof');
  const merged = (
    inputSchema === undefined ? parameters : mergeAllOf({ allOf: [parameters, inputSchema] } as never, { resolvers: { type: mergeTypes } } as never)
  ) as Record<string, unknown>;
  const meta = Object.fromEntries(Object.entries(tool.properties ?? {}).filter(([key]) => isMetaProperty(key) && key !== '_output'));
  const mergedProperties = (merged.properties ?? {}) as Record<string, JsonSchema>;
  return {
    ...merged,
    type: 'object',
    ...(tool.description === undefined ? {} : { description: tool.description }),
    properties: { ...mergedProperties, ...meta, _output: outputSchema, _resolve: { const: 'upfront' } },
    additionalProperties: false,
  };
}

/** The tool with `outputSchema` as its `_output` contract and `_resolve` fixed to `upfront`, its parameters as written. */
function withOutput(tool: ToolSchema, outputSchema: JsonSchema): ToolSchema {
  return { ...tool, properties: { ...(tool.properties ?? {}), _output: outputSchema, _resolve: { const: 'upfront' } } };
}

/** A run preparer that resolves every up-front delegate of a document before its run starts. */
export function createUpfrontPreparer(resolvers: DelegateResolver, urls?: UrlResolver): RunPreparer {
  return async (request: LoadedRequest, options: RunOptions): Promise<LoadedRequest> => {
    const problems: Problem[] = [];
    const context: Message[] = [];
    for (const [index, message] of request.document.context.entries()) {
      if (message.type !== 'tool') {
        context.push(message);
        continue;
      }
      const tools: Record<string, ToolSchema> = {};
      for (const [name, tool] of Object.entries((message as ToolMessage).tool)) {
        if (!resolvesUpfront(tool, options, request.document.config?.resolve)) {
          tools[name] = tool;
          continue;
        }
        const reference = metaConst(tool, '_delegate') as string;
        const context: ResolveContext = {
          base: request.location,
          toolName: name,
          tool,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(request.document.config?.delegates === undefined ? {} : { delegates: request.document.config.delegates }),
        };
        // An A2A agent's contract is its card's (DEL-33); without an input schema its tool keeps its own parameters.
        const contract = isA2aReference(reference)
          ? await a2aContract(reference, urls, context)
          : await resolvers.resolve(reference, context).then((resolved) => ({
              location: resolved.location,
              inputSchema: declaredInputSchema(resolved.document),
              outputSchema: resolved.document.schema as JsonSchema | undefined,
            }));
        const { inputSchema } = contract;
        if (inputSchema === undefined && isA2aReference(reference)) {
          tools[name] = contract.outputSchema === undefined ? tool : withOutput(tool, contract.outputSchema);
          continue;
        }
        try {
          tools[name] = mergeDelegateContract(tool, inputSchema, contract.outputSchema ?? {});
        } catch (error) {
          problems.push({
            document: request.location,
            pointer: pointer('context', index, 'tool', name),
            message: `Expected the parameters of "${name}" ${JSON.stringify(parameterSchema(tool))} to merge with the input schema of ${contract.location} ${JSON.stringify(inputSchema)}, but they conflict: ${(error as Error).message}`,
          });
          tools[name] = tool;
        }
      }
      context.push({ ...message, tool: tools });
    }
    if (problems.length > 0) throw new RequestError(problems);
    return { ...request, document: { ...request.document, context } };
  };
}
