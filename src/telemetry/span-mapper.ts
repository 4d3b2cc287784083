/** Our trace events as OpenTelemetry spans by the GenAI semantic conventions (spec/telemetry.md): one mapper, used live and by `export`. */
import {
  type Attributes,
  type AttributeValue,
  type Context,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer as OpenTelemetryTracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import type { KnownTraceEvent, TraceEventOf } from '../protocol/trace/events.js';
import { knownTraceEvent } from '../protocol/trace/events.js';
import type { TraceContext, TraceContextSource, TraceEvent } from '../protocol/trace/trace.js';
import type { UsageSummary } from '../protocol/usage.js';

/** The prefix of the attributes that are this project's own facts, not the conventions' (TEL-3). */
export const OWN_PREFIX = 'delegate_run.';

/** How a {@link SpanMapper} maps. */
export interface SpanMapperOptions {
  /** Prompts, answers, inputs, outputs, call parameters and results as attributes (TEL-4); off by default, since they may hold secrets. */
  content?: boolean;
  /** The context the tree's top run continues: an incoming `traceparent` (TEL-6), an application's active span; a new trace when absent. */
  parent?: Context;
  /**
   * Live (TEL-8): a run executed as a queued job of a run mapped here is left to the process that
   * runs it, which exports its spans itself; its events relayed here are not mapped again.
   * `export` maps every run of the file.
   */
  leaveQueued?: boolean;
  /** Told, before the span of a run without a parent is started, the trace id it had when recorded (`export`: `run.started.traceId`, TEL-10). */
  rootTraceId?: (traceId: string | undefined) => void;
}

/** A run's span and what its later spans need of it. */
interface RunSpan {
  span: Span;
  /** The run's model spec, `null` when it has none. */
  model: string | null;
  retries: number;
  /** The keys of its model attempts and calls still open: ending the run ends them without a scan of every run's (a wide fan-out). */
  open: Set<string>;
}

const propagator = new W3CTraceContextPropagator();

/**
 * Maps trace events to spans (TEL-2): a run is `invoke_agent <name>`, a model attempt
 * `chat <model>`, a call `execute_tool <tool>`; a delegated run is a child of its delegating call's
 * span. Span times are the events' times. It is also the tree's {@link TraceContextSource}.
 */
export class SpanMapper implements TraceContextSource {
  private readonly runs = new Map<string, RunSpan>();
  private readonly calls = new Map<string, Span>();
  private readonly attempts = new Map<string, Span>();
  /** The delegating call of each child run, by the child's id. */
  private readonly delegations = new Map<string, { run: string; call: string }>();
  /** What `queue.job` said of a run mapped here, set on its span once it starts. */
  private readonly jobs = new Map<string, Attributes>();
  /** Runs left to the process that runs them (TEL-8). */
  private readonly left = new Set<string>();
  /** Every run mapped here, ended or not: a job's events relayed after its caller ended are still its. */
  private readonly mapped = new Set<string>();
  private readonly content: boolean;

  constructor(
    private readonly tracer: OpenTelemetryTracer,
    private readonly options: SpanMapperOptions = {},
  ) {
    this.content = options.content ?? false;
  }

  /** Maps one event; an event of a name it does not know (an Activity's own) becomes a span event of its run. */
  take(given: TraceEvent): void {
    if (this.left.has(given.run) || (given.parent !== null && this.left.has(given.parent))) {
      this.left.add(given.run);
      return;
    }
    const event = knownTraceEvent(given);
    if (!event) {
      this.runs.get(given.run)?.span.addEvent(given.event, {}, timeOf(given.ts));
      return;
    }
    this.map(event);
  }

  /** The trace id of `run`'s span, started now when it is not yet (TEL-7). */
  traceIdOf(run: string, parent: string | null): string | undefined {
    if (this.left.has(run)) return undefined;
    return (this.runs.get(run) ?? this.openRun(run, parent, new Date(), null)).span.spanContext().traceId;
  }

  /** The W3C context of a call's span, or of the run's (TEL-6). */
  contextOf(run: string, call?: string): TraceContext | undefined {
    const span = (call === undefined ? undefined : this.calls.get(key(run, call))) ?? this.runs.get(run)?.span;
    if (!span) return undefined;
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    if (carrier.traceparent === undefined) return undefined;
    return { traceparent: carrier.traceparent, ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}) };
  }

  /** Ends every span still open, now (a run cut short, a trace file that stops mid-run). */
  close(): void {
    const now = new Date();
    for (const span of [...this.attempts.values(), ...this.calls.values()]) span.end(now);
    for (const run of this.runs.values()) run.span.end(now);
    this.attempts.clear();
    this.calls.clear();
    this.runs.clear();
  }

  private map(event: KnownTraceEvent): void {
    const at = timeOf(event.ts);
    switch (event.event) {
      case 'queue.job':
        // A job of a run mapped here runs elsewhere: that process exports its spans (TEL-8).
        if (this.options.leaveQueued && event.parent !== null && this.mapped.has(event.parent)) {
          this.left.add(event.run);
          return;
        }
        this.jobs.set(event.run, {
          [own('queue.job')]: event.job,
          [own('queue.name')]: event.queue,
          [own('queue.worker')]: event.worker,
          [own('queue.attempt')]: event.attempt,
        });
        return;
      case 'run.started':
      case 'run.resumed':
        this.startRun(event, at);
        return;
      case 'run.completed':
        this.endRun(
          event.run,
          at,
          event.usageTotal,
          this.content ? { [ATTR_GEN_AI_OUTPUT_MESSAGES]: json([{ role: 'assistant', parts: [{ type: 'text', content: json(event.output) }] }]) } : {},
        );
        return;
      case 'run.failed': {
        const run = this.runs.get(event.run);
        run?.span.setStatus({ code: SpanStatusCode.ERROR, message: `${event.code}: ${event.message}` });
        run?.span.setAttribute(ATTR_ERROR_TYPE, event.code);
        this.endRun(event.run, at, event.usageTotal, {});
        return;
      }
      case 'model.request':
        this.startAttempt(event, at);
        return;
      case 'model.retry': {
        // The retried attempt is the step's open one: a retry's `attempt` counts provider tries, not re-asks (TRACE-12).
        const run = this.runs.get(event.run);
        const step = `${key(event.run, event.step)}\u0000`;
        const attempt = [...(run?.open ?? [])].find((name) => name.startsWith(step));
        if (attempt !== undefined)
          this.attempts
            .get(attempt)
            ?.addEvent('model.retry', { [own('attempt')]: event.attempt, [own('reason')]: event.reason, [own('wait_ms')]: event.waitMs }, at);
        if (run) run.retries += 1;
        return;
      }
      case 'model.response':
        this.endAttempt(event, at);
        return;
      case 'call.started':
        this.startCall(event.run, event.call, event.tool, at, {
          ...(event.instance === null ? {} : { [own('instance')]: event.instance }),
          ...(this.content ? { [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: json(event.params) } : {}),
        });
        return;
      case 'call.completed':
        this.endCall(event.run, event.call, at, this.content ? { [ATTR_GEN_AI_TOOL_CALL_RESULT]: json(event.result) } : {});
        return;
      case 'call.failed': {
        const span = this.calls.get(key(event.run, event.call)) ?? this.startCall(event.run, event.call, event.tool, at, {});
        span?.setStatus({ code: SpanStatusCode.ERROR, message: `${event.error.code}: ${event.error.message}` });
        span?.setAttribute(ATTR_ERROR_TYPE, event.error.code);
        this.endCall(event.run, event.call, at, {});
        return;
      }
      case 'call.replayed':
        this.startCall(event.run, event.call, event.tool, at, { [own('replayed')]: event.outcome });
        this.endCall(event.run, event.call, at, {});
        return;
      case 'delegate.started':
        this.delegations.set(event.child, { run: event.run, call: event.call });
        this.calls.get(key(event.run, event.call))?.setAttributes(
          defined({
            [own('delegate.child')]: event.child,
            [own('delegate.name')]: event.name,
            [own('delegate.reference')]: event.reference,
            [own('resolution')]: event.resolution,
            [own('tier')]: event.tier ?? undefined,
            [own('delegate.model')]: event.model ?? undefined,
          }),
        );
        return;
      case 'delegate.failed':
        if (event.failureMode !== undefined) this.calls.get(key(event.run, event.call))?.setAttribute(own('failure_mode'), event.failureMode);
        return;
      case 'approval.requested':
      case 'approval.decided':
        this.calls
          .get(key(event.run, event.call))
          ?.addEvent(event.event, event.event === 'approval.decided' ? defined({ [own('decision')]: event.decision, [own('decided_by')]: event.by }) : {}, at);
        return;
      case 'mcp.connected':
      case 'mcp.failed':
        this.runs
          .get(event.run)
          ?.span.addEvent(event.event, defined({ [own('mcp.server')]: event.server, [own('mcp.tool')]: 'tool' in event ? event.tool : undefined }), at);
        return;
      case 'queue.retried':
        this.runs.get(event.run)?.span.setAttribute(own('queue.retried_attempts'), event.attempts);
        return;
      default:
        // Journal bookkeeping, skipped calls, replayed answers, advisors' opinions: the run's span notes them.
        this.runs.get(event.run)?.span.addEvent(event.event, {}, at);
    }
  }

  /** Starts a run's span: under its delegating call's span, else its parent run's, else the tree's given parent (TEL-2, TEL-6). */
  private openRun(run: string, parent: string | null, at: Date, model: string | null, traceId?: string): RunSpan {
    const delegation = this.delegations.get(run);
    const above =
      (delegation ? this.calls.get(key(delegation.run, delegation.call)) : undefined) ?? (parent === null ? undefined : this.runs.get(parent)?.span);
    if (!above) this.options.rootTraceId?.(traceId);
    const context = above ? trace.setSpan(ROOT_CONTEXT, above) : (this.options.parent ?? ROOT_CONTEXT);
    const span = this.tracer.startSpan(
      'invoke_agent',
      { kind: SpanKind.INTERNAL, startTime: at, attributes: { [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent' } },
      context,
    );
    const opened = { span, model, retries: 0, open: new Set<string>() };
    this.runs.set(run, opened);
    this.mapped.add(run);
    return opened;
  }

  private startRun(event: TraceEventOf<'run.started'> | TraceEventOf<'run.resumed'>, at: Date): void {
    const traceId = 'traceId' in event ? event.traceId : undefined;
    const run = this.runs.get(event.run) ?? this.openRun(event.run, event.parent, at, event.model, traceId);
    run.model = event.model;
    run.span.updateName(`invoke_agent ${event.name}`);
    const model = modelOf(event.model);
    run.span.setAttributes(
      defined({
        [ATTR_GEN_AI_AGENT_NAME]: event.name,
        [ATTR_GEN_AI_PROVIDER_NAME]: model?.provider,
        [ATTR_GEN_AI_REQUEST_MODEL]: model?.name,
        // The run's id is ours: `gen_ai.agent.id` names an agent, not one invocation of it, and internal agent spans leave it out.
        [own('run.id')]: event.run,
        [own('parent.run')]: event.parent ?? undefined,
        [own('depth')]: event.depth,
        [own('request')]: event.request,
        [own('resumed')]: event.event === 'run.resumed' ? true : undefined,
        ...(this.jobs.get(event.run) ?? {}),
        ...(this.content && 'input' in event
          ? { [ATTR_GEN_AI_INPUT_MESSAGES]: json([{ role: 'user', parts: [{ type: 'text', content: json(event.input) }] }]) }
          : {}),
      }),
    );
  }

  private endRun(id: string, at: Date, usage: UsageSummary | undefined, attributes: Attributes): void {
    const run = this.runs.get(id);
    if (!run) return;
    for (const name of run.open) {
      (this.attempts.get(name) ?? this.calls.get(name))?.end(at);
      this.attempts.delete(name);
      this.calls.delete(name);
    }
    run.span.setAttributes({
      ...attributes,
      ...(usage ? usageAttributes(usage) : {}),
      ...(usage ? defined({ [own('steps')]: usage.steps, [own('tool_calls')]: usage.toolCalls }) : {}),
      [own('retries')]: run.retries,
    });
    run.span.end(at);
    this.runs.delete(id);
  }

  private startAttempt(event: TraceEventOf<'model.request'>, at: Date): void {
    const run = this.runs.get(event.run);
    if (!run) return;
    const model = modelOf(run.model);
    const span = this.tracer.startSpan(
      `chat ${model?.name ?? 'model'}`,
      {
        kind: SpanKind.CLIENT,
        startTime: at,
        attributes: defined({
          [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
          [ATTR_GEN_AI_PROVIDER_NAME]: model?.provider,
          [ATTR_GEN_AI_REQUEST_MODEL]: model?.name,
          [own('step')]: event.step,
          [own('attempt')]: event.attempt,
          [own('schema_form')]: event.schemaForm?.form,
          ...(this.content
            ? {
                [ATTR_GEN_AI_INPUT_MESSAGES]: json(
                  event.messages.map((message) => ({ role: message.role, parts: [{ type: 'text', content: message.content }] })),
                ),
              }
            : {}),
        }),
      },
      trace.setSpan(ROOT_CONTEXT, run.span),
    );
    const name = key(event.run, event.step, event.attempt);
    this.attempts.set(name, span);
    run.open.add(name);
  }

  private endAttempt(event: TraceEventOf<'model.response'>, at: Date): void {
    const name = key(event.run, event.step, event.attempt);
    const run = this.runs.get(event.run);
    let span = this.attempts.get(name);
    if (!span) {
      if (!run) return;
      // An answer without its request (a trace cut at its start): the span is as long as the call was.
      this.startAttempt({ ...event, event: 'model.request', messages: [], schema: {} } as TraceEventOf<'model.request'>, new Date(at.getTime() - event.ms));
      span = this.attempts.get(name) as Span;
    }
    // A replayed answer stands for the model its cassette entry names (CAS-14): the span is named by it.
    const requested = modelOf(event.replayOf ?? run?.model ?? event.model);
    if (requested) span.updateName(`chat ${requested.name}`);
    const answered = modelOf(event.model);
    span.setAttributes(
      defined({
        [ATTR_GEN_AI_REQUEST_MODEL]: requested?.name,
        [ATTR_GEN_AI_PROVIDER_NAME]: requested?.provider,
        [ATTR_GEN_AI_RESPONSE_MODEL]: answered?.name,
        [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [finishReason(event.solution)],
        [own('replay_of')]: event.replayOf,
        [own('ms')]: event.ms,
        [own('response_format')]: event.responseFormat,
        ...usageAttributes({ ...event.usage, costUsd: event.costUsd }),
        ...(this.content
          ? { [ATTR_GEN_AI_OUTPUT_MESSAGES]: json([{ role: 'assistant', parts: [{ type: 'text', content: event.text ?? json(event.solution) }] }]) }
          : {}),
      }),
    );
    span.end(at);
    this.attempts.delete(name);
    run?.open.delete(name);
  }

  private startCall(run: string, call: string, tool: string, at: Date, attributes: Attributes): Span | undefined {
    const parent = this.runs.get(run);
    if (!parent) return undefined;
    const span = this.tracer.startSpan(
      `execute_tool ${tool}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: at,
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR_GEN_AI_TOOL_NAME]: tool,
          [ATTR_GEN_AI_TOOL_CALL_ID]: call,
          [ATTR_GEN_AI_TOOL_TYPE]: 'function',
          ...attributes,
        },
      },
      trace.setSpan(ROOT_CONTEXT, parent.span),
    );
    this.calls.set(key(run, call), span);
    parent.open.add(key(run, call));
    return span;
  }

  private endCall(run: string, call: string, at: Date, attributes: Attributes): void {
    const span = this.calls.get(key(run, call));
    if (!span) return;
    span.setAttributes(attributes);
    span.end(at);
    this.calls.delete(key(run, call));
    this.runs.get(run)?.open.delete(key(run, call));
  }
}

/** An attribute name of this project's own (TEL-3). */
function own(name: string): string {
  return `${OWN_PREFIX}${name}`;
}

/** The key of a run's call or model attempt. */
function key(run: string, ...rest: (string | number)[]): string {
  return [run, ...rest].join('\u0000');
}

function timeOf(ts: string): Date {
  const time = new Date(ts);
  return Number.isNaN(time.getTime()) ? new Date() : time;
}

/** The provider and model name of a model spec (`openai:gpt-4.1-mini`); `replay:<cassette>` is the provider `replay`. */
function modelOf(spec: string | null | undefined): { provider: string; name: string } | undefined {
  if (!spec) return undefined;
  const colon = spec.indexOf(':');
  if (colon < 0) return { provider: 'unknown', name: spec };
  const provider = spec.slice(0, colon);
  return { provider, name: provider === 'replay' ? 'replay' : spec.slice(colon + 1) };
}

/** The finish reason of an answer (TEL-2): `tool_calls` when it asked for calls, else `stop`. */
function finishReason(solution: unknown): string {
  const calls = solution !== null && typeof solution === 'object' ? (solution as { calls?: unknown }).calls : undefined;
  return Array.isArray(calls) && calls.length > 0 ? 'tool_calls' : 'stop';
}

function usageAttributes(usage: Partial<UsageSummary>): Attributes {
  return defined({
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: usage.inputTokens,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: usage.outputTokens,
    [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: usage.cacheReadTokens,
    [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: usage.cacheWriteTokens,
    [ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS]: usage.reasoningTokens,
    // The dollars this project priced (TEL-3); absent when a price is unknown.
    [own('cost_usd')]: usage.costUsd ?? undefined,
  });
}

/** The attributes whose values are defined. */
function defined(attributes: Record<string, AttributeValue | undefined | null>): Attributes {
  const kept: Attributes = {};
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined && value !== null) kept[name] = value;
  return kept;
}

/** A value as the JSON string an attribute holds. */
function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return String(value);
  }
}
