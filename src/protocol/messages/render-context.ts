/** Rendering: the context turned into provider messages by the handler pipeline, data merged by identity first. */
import { foldRecords, viewOf, type DataRecord, type ReadResult } from '../variables/data-records.js';
import { dataIdentityOf, latestFields, recordOf, showKind } from './data-messages.js';
import type { AnswerCheck, HandlerRegistry, RenderState } from './handlers.js';
import type { ProviderMessage } from '../model.js';
import { collectTools } from '../tools/tools.js';
import type { JsonSchema, Message, RequestConfig, ToolSchema } from '../types.js';

/** What rendering produces for one model call. */
export interface RenderedContext {
  messages: ProviderMessage[];
  config: RequestConfig;
  solutionProperties: Record<string, JsonSchema>;
  /** Which added properties an answer must have (MSG-21). */
  solutionRequired: string[];
  /** Definitions the added properties refer to (MSG-21). */
  solutionDefinitions: Record<string, JsonSchema>;
  /** The problems of an answer (or answer prefix) under the handlers' rules beyond the schema (MSG-21); none when it keeps them. */
  checkAnswer: AnswerCheck;
}

/** Where in a run the context is rendered, and what the run knows of its calls (PLAN-11, PLAN-12). */
export interface RenderOptions extends Pick<RenderState, 'callStatus' | 'instances'> {
  /** The model step (default 0, the run's first). */
  step?: number;
  /** The tools the answer may call, built-in ones included (default: those the context defines, MSG-22). */
  tools?: ReadonlyMap<string, ToolSchema>;
}

/** The messages of one identity (kind plus instance), in context order, the records they hold, and where the first one is. */
export interface IdentityGroup {
  kind: string;
  instance: string | undefined;
  first: number;
  members: Message[];
  records: DataRecord[];
}

/**
 * The merged message of one identity, in the canonical shape of its kind: its records folded
 * (a global identity's through the view of its kind), with the latest schema and description.
 */
export function mergedMessage(identity: Omit<IdentityGroup, 'first'>, handlers: HandlerRegistry): Message | undefined {
  const { kind, instance, members, records } = identity;
  const view: ReadResult =
    instance === undefined ? viewOf(records, kind, undefined) : records.length > 0 ? { found: true, value: foldRecords(records) } : { found: false };
  const fields = { ...latestFields(members), ...(instance === undefined ? {} : { _instance: instance }) };
  return showKind(kind, view, fields, members, handlers);
}

/** The state handlers start from when `context` is rendered at `step`, offering `tools` (MSG-9, MSG-21). */
export function emptyRenderState(context: readonly Message[], config: RequestConfig, step: number, tools: ReadonlyMap<string, ToolSchema>): RenderState {
  return {
    messages: [],
    config: { ...config },
    solutionProperties: {},
    solutionRequired: [],
    solutionDefinitions: {},
    answerChecks: [],
    instructions: [],
    context,
    step,
    tools,
  };
}

/**
 * Runs every message through its handler. Data-like messages of one identity render once, merged,
 * at the position of the identity's first message: the prompt's order then does not depend on
 * which parallel call finished last, so it stays stable (and cache-friendly) across runs.
 */
export function renderContext(
  context: readonly Message[],
  handlers: HandlerRegistry,
  config: RequestConfig = {},
  options: RenderOptions = {},
): RenderedContext {
  const { step = 0, tools, ...run } = options;
  const state: RenderState = Object.assign(emptyRenderState(context, config, step, tools ?? collectTools(context, new Map(), handlers)), run);
  // Each identity's messages and records, gathered in one pass so that merging stays linear.
  const identities = new Map<string, IdentityGroup>();
  const identityAt: (string | undefined)[] = [];
  context.forEach((message, index) => {
    const found = dataIdentityOf(message, handlers);
    identityAt.push(found?.key);
    if (found === undefined) return;
    let identity = identities.get(found.key);
    if (!identity) {
      identity = { kind: found.kind, instance: found.instance, first: index, members: [], records: [] };
      identities.set(found.key, identity);
    }
    identity.members.push(message);
    const record = recordOf(message, handlers);
    if (record) identity.records.push(record);
  });
  context.forEach((message, index) => {
    const handler = handlers.get(message.type);
    if (!handler?.render) return;
    const key = identityAt[index];
    if (key === undefined) {
      handler.render(message, state);
      return;
    }
    const identity = identities.get(key);
    if (!identity || identity.first !== index) return;
    const merged = mergedMessage(identity, handlers);
    if (merged) (handlers.get(merged.type) ?? handler).render?.(merged, state);
  });
  if (state.instructions.length > 0) state.messages.push({ role: 'system', content: state.instructions.join('\n\n') });
  const checks = [...state.answerChecks];
  return {
    messages: state.messages,
    config: state.config,
    solutionProperties: state.solutionProperties,
    solutionRequired: state.solutionRequired,
    solutionDefinitions: state.solutionDefinitions,
    checkAnswer: (answer) => checks.flatMap((check) => check(answer)),
  };
}
