/** The Request a `delegate` call hands its worker (spec/delegate-tool.md DEL-25): the task, the included context, the lent tools, `need_context`, the output schema. */
import { DELEGATE_TOOL, NEED_CONTEXT_TOOL } from '../protocol/tools/delegate-tool.js';
import { CallError } from '../protocol/errors.js';
import { collectTools } from '../protocol/tools/tools.js';
import type { Call, JsonSchema, Message, RequestConfig, RequestDocument, ToolSchema } from '../protocol/types.js';
import { NEED_CONTEXT_TOOL_SCHEMA } from './need-context.js';

/** The name and location of every worker: the anonymous delegate of the `delegate` tool (DOC-4, CAS-1). */
export const WORKER_NAME = `anonymous:${DELEGATE_TOOL}`;

/** What every worker is told first. */
export const WORKER_INSTRUCTIONS = [
  'You are a worker: a planner handed you one focused sub-task, the last message below.',
  'You see only the context the planner included for it.',
  `Do the task and answer with the output. If it cannot be done with this context, do not guess: call ${NEED_CONTEXT_TOOL} with what is missing and why.`,
].join(' ');

/** A `delegate` call's parameters, as the tool's schema admits them (DEL-23). */
export interface DelegateCall {
  tier: NonNullable<RequestConfig['tier']>;
  task: string;
  context: { mode: 'minimal' } | { mode: 'explicit'; include: string[] };
  output_schema?: JsonSchema;
  allowed_tools?: string[];
  max_tokens?: number;
}

/** The call's parameters, typed (they were checked against the tool's schema before it ran). */
export function delegateCall(call: Call): DelegateCall {
  return call as unknown as DelegateCall;
}

/**
 * The scopes a `delegate` call's context names (DEL-25), as written, then `tool` for the caller's
 * own tool definitions (which only `allowed_tools` lends). Naming `tool` in `include` is refused:
 * tools are lent by `allowed_tools`, so that `delegate` is always dropped.
 */
export function delegateScopes(call: Call): string[] {
  const context = (call as Partial<DelegateCall>).context;
  const include = context?.mode === 'explicit' && Array.isArray(context.include) ? context.include : [];
  if (include.includes('tool') || include.includes('†tool')) {
    throw new CallError('invalid_params', `The context of a ${DELEGATE_TOOL} call names context, not tools: lend tools with allowed_tools.`, {
      toolName: call._tool,
    });
  }
  return [...include, 'tool'];
}

/**
 * The tools a worker is lent (DEL-25): the caller's own tools named in `allowed_tools` (all of them
 * when it is absent), never `delegate`. Every name asked for that the worker does not get is dropped;
 * `asked` counts the distinct names asked for (TRACE-17's `allowedToolCount`).
 */
export function lendTools(
  own: ReadonlyMap<string, ToolSchema>,
  allowed: readonly string[] | undefined,
): { tools: Record<string, ToolSchema>; dropped: string[]; asked: number } {
  const asked = allowed ?? [...own.keys()];
  const tools: Record<string, ToolSchema> = {};
  const dropped: string[] = [];
  for (const name of asked) {
    // A worker's own need_context is not lent: every worker gets its own.
    if (name === NEED_CONTEXT_TOOL) continue;
    const tool = own.get(name);
    if (name === DELEGATE_TOOL || tool === undefined) {
      if (!dropped.includes(name)) dropped.push(name);
      continue;
    }
    tools[name] = tool;
  }
  // Asked for or not, `delegate` is never lent: recording it says so when the caller had one of its own.
  if (own.has(DELEGATE_TOOL) && !dropped.includes(DELEGATE_TOOL)) dropped.push(DELEGATE_TOOL);
  return { tools, dropped, asked: new Set(asked).size };
}

/** What the Activity received as context, split into the caller's tool messages and the included context. */
export function splitContext(context: readonly Message[]): { included: Message[]; tools: Map<string, ToolSchema> } {
  return {
    included: context.filter((message) => message.type !== 'tool'),
    tools: collectTools(context.filter((message) => message.type === 'tool')),
  };
}

/**
 * The worker's Request (DEL-25): a system message of instructions, the included context, the lent
 * tools with `need_context`, and the task as the last user turn; its output schema is
 * `output_schema`, else a string; `config.maxTokens` is `max_tokens`; its `config.delegation` is
 * the caller's (DEL-24).
 */
export function workerRequest(
  call: DelegateCall,
  included: readonly Message[],
  tools: Record<string, ToolSchema>,
  delegation?: RequestConfig['delegation'],
): RequestDocument {
  return {
    meta: { name: WORKER_NAME, description: `A worker of tier ${call.tier}.` },
    config: {
      tier: call.tier,
      ...(call.max_tokens === undefined ? {} : { maxTokens: call.max_tokens }),
      ...(delegation === undefined ? {} : { delegation }),
    },
    context: [
      { type: 'system', text: WORKER_INSTRUCTIONS },
      ...included,
      { type: 'tool', tool: { ...tools, [NEED_CONTEXT_TOOL]: NEED_CONTEXT_TOOL_SCHEMA } },
      { type: 'user', text: call.task },
    ],
    schema: call.output_schema ?? { type: 'string' },
  };
}

/** The task's size in tokens, estimated (TRACE-17): a token is about four characters. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
