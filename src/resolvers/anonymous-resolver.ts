/** The anonymous resolver: `"anonymous"` builds a fresh Request from the delegating tool itself. */
import { normalizeTool } from '../protocol/tools/normalize-tool.js';
import { isMetaProperty, type JsonSchema, type ToolSchema } from '../protocol/types.js';
import { isAnonymousReference } from './reference-forms.js';
import type { LocatedRequest, ResolveContext, Resolver } from './resolver.js';

/** The instructions an anonymous delegate gets when its tool has no description. */
export function defaultAnonymousInstructions(toolName: string): string {
  return `Carry out the task of the tool "${toolName}" for the input below, and answer with an output that matches the output schema.`;
}

/**
 * Builds the raw (not yet validated) Request document of an anonymous delegate:
 * - `meta.name` `anonymous:<toolName>` (and the tool's description as `meta.description`);
 * - a `system` message whose text is the tool's description, or
 *   {@link defaultAnonymousInstructions} when it has none;
 * - an `input` template slot whose `schema` is the tool's parameter schema without
 *   meta-properties (properties and `required` entries starting with `_`, top-level `_` keys and
 *   the description, which already is the instructions);
 * - `schema`: the tool's `_output` schema, or `true` (any value) when the tool declares none.
 *
 * `JSON.stringify` of this value is the exact text an integrity pin on `anonymous#sha256-…` is
 * checked against.
 */
export function anonymousRequest(toolName: string, tool: ToolSchema): Record<string, unknown> {
  const { properties = {}, required, description, ...rest } = normalizeTool(tool);
  const parameters: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) if (!isMetaProperty(key)) parameters[key] = value;
  parameters.properties = Object.fromEntries(Object.entries(properties).filter(([name]) => !isMetaProperty(name)));
  const requiredParameters = Array.isArray(required) ? required.filter((name) => !isMetaProperty(name)) : [];
  if (requiredParameters.length > 0) parameters.required = requiredParameters;
  const output: JsonSchema = properties._output ?? true;
  const instructions = typeof description === 'string' && description.trim() !== '' ? description : defaultAnonymousInstructions(toolName);
  return {
    meta: { name: anonymousLocation(toolName), ...(typeof description === 'string' ? { description } : {}) },
    context: [
      { type: 'system', text: instructions },
      { type: 'input', description: `The parameters the caller passed to the tool "${toolName}".`, schema: parameters },
    ],
    schema: output,
  };
}

/** The location (and name) of the anonymous delegate of a tool: `anonymous:<toolName>`. */
export function anonymousLocation(toolName: string): string {
  return `anonymous:${toolName}`;
}

/**
 * Resolves `"anonymous"` (optionally pinned, `anonymous#sha256-…`) by building a Request from
 * `context.tool` with {@link anonymousRequest}, as the text `JSON.stringify` writes; read like any
 * other, a tool with an invalid parameter or output schema is a RequestError naming
 * `anonymous:<tool>` and the pointer. The result is exactly as trusted as the referring document:
 * it is that document's own tool.
 */
export class AnonymousResolver implements Resolver {
  /** The registry name of this resolver. */
  readonly name = 'anonymous';
  /** The reference form this resolver understands, for error messages. */
  readonly form = '"anonymous" (a Request built from the tool itself)';

  /** Accepts `anonymous` and `anonymous#<integrity pin>`, whatever the base. */
  accepts(reference: string, _context?: ResolveContext): boolean {
    return isAnonymousReference(reference);
  }

  /** Builds the anonymous Request of `context.tool`. */
  async resolve(_reference: string, context: ResolveContext): Promise<LocatedRequest> {
    const location = anonymousLocation(context.toolName);
    const content = JSON.stringify(anonymousRequest(context.toolName, context.tool));
    return { location, content, name: location, trusted: context.trusted ?? true };
  }
}
