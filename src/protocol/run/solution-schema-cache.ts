/** The composed Solution schema, once per distinct set of inputs: steps and runs that offer the same tools share one schema object (MSG-26). */
import type { JsonSchema, ToolSchema } from '../types.js';
import { composeSolutionSchema, isExplicitTool, type SolutionAdditions } from '../tools/tools.js';

/** Distinct compositions kept; the oldest is dropped beyond it (a long-running server sees many documents). */
const MAX_ENTRIES = 256;

/** What a Solution schema is composed from (the arguments of composeSolutionSchema). */
export interface SolutionInputs {
  tools: ReadonlyMap<string, ToolSchema>;
  outputSchema: JsonSchema;
  hasActivity: (name: string) => boolean;
  extraProperties: Record<string, JsonSchema>;
  instances: readonly string[];
  planning: boolean;
  additions: SolutionAdditions;
}

/**
 * Composes Solution schemas, reusing the schema composed before from equal inputs (compared as
 * JSON, with each tool's explicitness, MSG-26). The same object then reaches the provider, whose
 * strict transform and the core's compiled validator are kept per schema object, so a fan-out of
 * a thousand identical delegates composes, transforms and compiles one schema. The returned
 * schema is shared: callers must not change it.
 */
export class SolutionSchemaCache {
  private readonly entries = new Map<string, JsonSchema>();

  /** The Solution schema of these inputs. */
  schemaFor(inputs: SolutionInputs): JsonSchema {
    const { tools, outputSchema, hasActivity, extraProperties, instances, planning, additions } = inputs;
    const toolKey = [...tools].map(([name, tool]) => [name, isExplicitTool(name, tool, hasActivity), tool]);
    const key = JSON.stringify([toolKey, outputSchema, extraProperties, instances, planning, additions]);
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      // Most recently used last, so the oldest unused one is dropped first.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const schema = composeSolutionSchema(tools, outputSchema, hasActivity, extraProperties, instances, planning, additions);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, schema);
    return schema;
  }
}
