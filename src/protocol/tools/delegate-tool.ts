/** The built-in `delegate` tool (spec/delegate-tool.md DEL-23 to DEL-25): its schema, and whether a run is offered it, as the tier catalog says. */
import type { Model } from '../model.js';
import type { RunInfo } from '../contracts.js';
import type { JsonSchema, RequestDocument, ToolSchema } from '../types.js';

/** The name of the built-in tool that hands a sub-task to a worker on a tier's model (DEL-23). */
export const DELEGATE_TOOL = 'delegate';
/** The Activity behind {@link DELEGATE_TOOL}: a layer on the Delegation Activity's child runs (DEL-20). */
export const TIER_DELEGATE_ACTIVITY = '@delegate-tier';
/** The built-in tool a worker calls when its task cannot be done with the context it was given (DEL-26). */
export const NEED_CONTEXT_TOOL = 'need_context';
/** The Activity behind {@link NEED_CONTEXT_TOOL}: it ends the worker's run with `insufficient_context`. */
export const NEED_CONTEXT_ACTIVITY = '@need-context';

/**
 * What the core knows of the model catalog, through the runtime's creator (DEL-23): the tiers that
 * exist (the `tier` enum of the `delegate` tool) and whether a run's model may delegate. The core
 * imports no catalog; `createRuntime` supplies one built from models.json, `DELEGATE_MODELS` and
 * `--tier`. A Runtime without one never offers the tool.
 */
export interface TierCatalog {
  /** The tiers of the model catalog, in order (`fast`, `balanced`, `deep`). */
  tiers(): readonly string[];
  /**
   * The live model a run uses: its model's own spec, or, in a replayed run, the model the run
   * stands for (its `config.model`, else a model of its `config.tier`, else the model its cassette
   * entries name: CAS-15), never the cassette; undefined when nothing says.
   */
  standsFor(run: { model: Model | undefined; document: RequestDocument; name: string }): string | undefined;
  /** Whether the catalog entry of a model has `can_delegate: true` (unknown models may not delegate). */
  canDelegate(model: string): boolean;
}

/**
 * The tiers a `delegate` call may always ask for (DEL-23): the protocol's own names. A tier the
 * catalog has no model of is still asked for, and answered `no_model_available_for_tier` (DEL-26).
 */
export const PROTOCOL_TIERS: readonly string[] = ['fast', 'balanced', 'deep'];

/** The `tier` enum: the protocol's tiers, then any other the catalog has, each once (DEL-23). */
export function askableTiers(catalogTiers: readonly string[]): string[] {
  return [...new Set([...PROTOCOL_TIERS, ...catalogTiers])];
}

/** The answer the planner sees: a typed outcome, never the worker's usage (DEL-25). */
const OUTCOME_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    success: { type: 'boolean' },
    output: true,
    error: { type: ['string', 'null'] },
  },
  required: ['success', 'output', 'error'],
};

/** The `delegate` tool offered to a run, with the `tier` enum of {@link askableTiers} (DEL-23). */
export function delegateToolSchema(tiers: readonly string[]): ToolSchema {
  return {
    type: 'object',
    description: [
      'Hand one focused, mechanical sub-task to a worker running on a model of the chosen tier (fast is the cheapest).',
      'The worker sees only `task` and the context you include, nothing else of yours, and may use only the tools you allow.',
      'The result, written at _outputPath, is {"success": true, "output": …, "error": null} or {"success": false, "output": …, "error": "<failure mode>[: message]"};',
      'on "insufficient_context" the output says what the worker missed: call again including it.',
    ].join(' '),
    properties: {
      tier: { enum: askableTiers(tiers), description: 'The tier of the model the worker runs on.' },
      task: { type: 'string', minLength: 1, description: 'The sub-task, as a self-contained instruction.' },
      context: {
        description:
          'What the worker sees of your context: {"mode": "minimal"} (the task alone) or {"mode": "explicit", "include": [...]} naming data by reference ("†state.notes") or by kind ("input", "state", "system", "history").',
        anyOf: [
          { type: 'object', properties: { mode: { const: 'minimal' } }, required: ['mode'], additionalProperties: false },
          {
            type: 'object',
            properties: { mode: { const: 'explicit' }, include: { type: 'array', items: { type: 'string', minLength: 1 } } },
            required: ['mode', 'include'],
            additionalProperties: false,
          },
        ],
      },
      output_schema: { type: 'object', description: 'A JSON Schema of the output; without it the output is a string.' },
      allowed_tools: { type: 'array', items: { type: 'string' }, description: 'Names of your tools the worker may call; all of them when absent.' },
      max_tokens: { type: 'integer', minimum: 1, description: 'The most output tokens the worker may write per answer.' },
      _activity: { const: TIER_DELEGATE_ACTIVITY },
      _output: OUTCOME_SCHEMA,
    },
    required: ['tier', 'task', 'context'],
  };
}

/** The instruction added to the prompt of a run that is offered `delegate` (DEL-23). */
export function delegationInstructions(tiers: readonly string[]): string {
  return `You may hand focused, mechanical sub-tasks to workers on cheaper models with the tool "${DELEGATE_TOOL}" (tiers: ${askableTiers(tiers).join(', ')}). A worker sees only its task and the context you include; its result tells you whether it succeeded, and what it needs when it lacked context.`;
}

/**
 * The `delegate` tool a run is offered, or undefined (DEL-24): offered when the runtime has a tier
 * catalog, the document does not set `config.delegation: false`, the run was not started by
 * `delegate` (unless its document sets `config.delegation.recursive: true`), and the run's model
 * may delegate.
 */
export function offeredDelegateTool(catalog: TierCatalog | undefined, document: RequestDocument, run: RunInfo): ToolSchema | undefined {
  if (!catalog) return undefined;
  const setting = document.config?.delegation;
  if (setting === false) return undefined;
  const recursive = typeof setting === 'object' && setting.recursive === true;
  if (run.worker && !recursive) return undefined;
  if (run.standsFor === undefined || !catalog.canDelegate(run.standsFor)) return undefined;
  return delegateToolSchema(catalog.tiers());
}
