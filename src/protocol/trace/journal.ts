/** Durable runs (spec/journal.md): the journal a run tree writes and resumes from, as the core sees it — a store the edge implements, and what a resumed tree replays from it. */
import { createHash } from 'node:crypto';
import type { ErrorJson } from '../errors.js';
import { UsageError } from '../errors.js';
import { canonicalJson } from '../json.js';
import type { ModelResponse } from '../model.js';
import type { TraceEvent } from './trace.js';
import type { JournaledOptions } from './events.js';
import type { RequestDocument } from '../types.js';
import type { UsageSummary } from '../usage.js';

/**
 * Where a journal lives (JOURNAL-1): the events it held when it was opened, and a durable append.
 * The core reads and writes no files; `src/files/journal-file.ts` implements it for a JSONL file.
 */
export interface JournalStore {
  /** Where it is (a file path), for messages. */
  readonly location: string;
  /** The events it held when opened to resume, in order; empty when opened to start a run. */
  readonly events: readonly TraceEvent[];
  /** The partial last line it ignored when opened (JOURNAL-7), named for the reader; absent when there was none. */
  readonly ignored?: string | undefined;
  /**
   * Takes one event. Never throws. Without {@link JournalStore.whenDurable} it is on the disk when
   * `append` returns; with it, once the promise that method gives resolves (JOURNAL-2).
   */
  append(event: TraceEvent): void;
  /**
   * A promise that every event appended so far survives the process being killed, or `undefined`
   * when they already do (JOURNAL-2): the runtime waits for it before each effect an event records.
   * A store flushing in groups implements it; one whose `append` is durable on return need not.
   */
  whenDurable?(): Promise<void> | undefined;
  /** Releases the store; harmless when called again. */
  close(): void;
  /** The first failure to write, if any: the journal stops at the event before it. */
  readonly error: Error | undefined;
}

/** Opens the journal at `location`: `create` replaces it, `resume` reads what it holds and appends after it. */
export type JournalOpener = (location: string, mode: 'create' | 'resume') => JournalStore;

/** What a journal says about the run tree it holds: the top run, its input and options, and what the front end recorded. */
export interface JournalStart {
  /** The top run's id, which the resumed top run keeps. */
  run: string;
  /** The resolved location of its Request. */
  request: string;
  name: string;
  input: unknown;
  /** The hash of its Request document when it started (JOURNAL-8). */
  requestHash: string | undefined;
  options: JournaledOptions;
  /** What the front end recorded to start the run the same way again (the CLI's flags). */
  settings: Record<string, unknown>;
}

/** The hashes of the documents hashed so far: the children of a fan-out share one document, hashed once (documents are not changed once loaded). */
const hashes = new WeakMap<RequestDocument, string>();

/** The hash recorded at `run.started` (JOURNAL-8): sha256 of the document's canonical JSON (keys sorted), so formatting does not count as a change. */
export function requestHash(document: RequestDocument): string {
  let hash = hashes.get(document);
  if (hash === undefined) {
    hash = `sha256:${createHash('sha256').update(canonicalJson(document)).digest('hex')}`;
    hashes.set(document, hash);
  }
  return hash;
}

/** Reads the top run of a journal and its options; a file that is no journal is a UsageError naming it. */
export function journalStart(store: Pick<JournalStore, 'events' | 'location'>): JournalStart {
  const top = store.events.find((event) => event.event === 'run.started' && event.parent === null);
  if (!top || typeof top.request !== 'string') {
    throw new UsageError(`The journal ${store.location} holds no run.started of a top run: it is empty or was not written by a run with a journal.`, {
      journal: store.location,
    });
  }
  const opened = store.events.find((event) => event.event === 'journal.started' && event.run === top.run);
  if (!opened) {
    throw new UsageError(
      `The journal ${store.location} has no journal.started event: it is a trace (--trace), not a journal (--journal), and holds no options to resume with; or its run was killed before it wrote them, having done nothing yet, so start it again.`,
      { journal: store.location },
    );
  }
  return {
    run: top.run,
    request: top.request,
    name: typeof top.name === 'string' ? top.name : top.request,
    input: top.input ?? undefined,
    requestHash: typeof top.requestHash === 'string' ? top.requestHash : undefined,
    options: (opened.options ?? {}) as JournaledOptions,
    settings: (opened.settings ?? {}) as Record<string, unknown>,
  };
}

/** What the journal knows of one execution of a call (JOURNAL-5). */
export interface JournaledCall {
  state: 'started' | 'completed' | 'failed';
  /** The value it produced (`completed`); `noResult` when it produced none. */
  result?: unknown;
  noResult?: boolean;
  /** Its error (`failed`). */
  error?: ErrorJson;
  /** The child runs it started, in order (JOURNAL-6). */
  children: string[];
  /** The resume session it was last started in: 0 for the first run. */
  session: number;
}

/**
 * The journal of a run tree being resumed, indexed by the identity of what it holds (JOURNAL-4 to
 * JOURNAL-6): model answers by run, step and attempt; executions of calls by run, call id and
 * parameters; the totals runs ended with. Each answer and execution is handed out once.
 */
export class JournalReplay {
  /**
   * Which session of the tree this is (JOURNAL-9): 0 for the run that begins the journal, n for its
   * nth resume. A queued tree's keys and jobs are its session's (QUEUE-12).
   */
  readonly session: number;
  private readonly events: readonly TraceEvent[];
  private readonly answers = new Map<string, TraceEvent>();
  private readonly calls = new Map<string, JournaledCall[]>();
  private readonly latest = new Map<string, JournaledCall>();
  private readonly totals = new Map<string, UsageSummary>();
  private readonly startedRuns = new Set<string>();
  /** What was replayed so far: model answers and calls. */
  readonly replayed = { answers: 0, calls: 0 };

  /**
   * @param events the journal's events, in order.
   * @param session the session this is, when the events do not say it: a queued child's subtree
   *   (QUEUE-13) lacks the top run's events. Default: {@link journalSession}.
   */
  constructor(events: readonly TraceEvent[], session = journalSession(events)) {
    this.events = events;
    this.session = session;
    let seen = 0;
    for (const event of events) {
      const run = event.run;
      switch (event.event) {
        case 'journal.resumed':
          seen += 1;
          break;
        case 'run.started':
          this.startedRuns.add(run);
          break;
        case 'model.response':
          this.answers.set(answerKey(run, event.step, event.attempt), event);
          break;
        case 'call.started':
          this.started(run, String(event.call), event.params, seen);
          break;
        case 'call.completed':
        case 'call.failed': {
          const call = this.latest.get(`${run}\u0000${String(event.call)}`);
          if (call?.state !== 'started') break;
          if (event.event === 'call.failed') Object.assign(call, { state: 'failed', error: event.error as ErrorJson });
          else Object.assign(call, { state: 'completed', result: event.result, ...(event.noResult === true ? { noResult: true } : {}) });
          break;
        }
        case 'delegate.started': {
          const call = this.latest.get(`${run}\u0000${String(event.call)}`);
          const child = String(event.child);
          if (call && !call.children.includes(child)) call.children.push(child);
          break;
        }
        case 'run.completed':
        case 'run.failed':
          if (isUsageSummary(event.usageTotal)) this.totals.set(run, event.usageTotal);
          break;
        case 'delegate.completed':
        case 'delegate.failed': {
          // An A2A agent has no run of its own: what it reported is its total (DEL-37).
          const usage = event.usage as { remote?: unknown } | undefined;
          if (usage?.remote === true && isUsageSummary(usage)) this.totals.set(String(event.child), usage);
          break;
        }
      }
    }
  }

  /** A call started again in a later session is the rerun of the execution that had not finished, not another one. */
  private started(run: string, callId: string, params: unknown, session: number): void {
    const key = callKeyOf(run, callId, params);
    const executions = this.calls.get(key) ?? [];
    const last = executions.at(-1);
    let call: JournaledCall;
    if (last && last.state === 'started' && last.session < session) {
      call = last;
      call.session = session;
    } else {
      call = { state: 'started', children: [], session };
      executions.push(call);
    }
    this.calls.set(key, executions);
    this.latest.set(`${run}\u0000${callId}`, call);
  }

  /**
   * The journaled events of the subtree of the run `root` (QUEUE-13): its own and its descendants',
   * in journal order, with every `journal.resumed` (which marks where each session began, JOURNAL-5).
   */
  subtree(root: string): TraceEvent[] {
    const parents = new Map<string, string | null>();
    for (const event of this.events) if (!parents.has(event.run)) parents.set(event.run, typeof event.parent === 'string' ? event.parent : null);
    const inside = new Map<string, boolean>();
    const within = (run: string): boolean => {
      let known = inside.get(run);
      if (known === undefined) {
        const parent = parents.get(run);
        known = run === root || (typeof parent === 'string' && within(parent));
        inside.set(run, known);
      }
      return known;
    };
    return this.events.filter((event) => event.event === 'journal.resumed' || within(event.run));
  }

  /** True when the journal shows the run started: it is resumed, not started (JOURNAL-6). */
  hasRun(run: string): boolean {
    return this.startedRuns.has(run);
  }

  /** The answer the model gave to this run's step and attempt, if the journal holds it (JOURNAL-4). */
  answer(run: string, step: number, attempt: number): ModelResponse | undefined {
    const event = this.answers.get(answerKey(run, step, attempt));
    if (!event) return undefined;
    this.answers.delete(answerKey(run, step, attempt));
    this.replayed.answers += 1;
    const solution = event.solution ?? undefined;
    const text = typeof event.text === 'string' ? event.text : JSON.stringify(solution ?? null);
    return {
      text,
      ...(solution === undefined ? {} : { solution }),
      model: String(event.model),
      usage: event.usage as ModelResponse['usage'],
      costUsd: typeof event.costUsd === 'number' ? event.costUsd : null,
      ...(typeof event.replayOf === 'string' ? { replayOf: event.replayOf } : {}),
    };
  }

  /** The next journaled execution of this call (JOURNAL-5), taken so it is not handed out again. */
  takeCall(run: string, callId: string, params: unknown): JournaledCall | undefined {
    // A tree begun now has nothing to take: its calls' parameters are not made into keys.
    if (this.calls.size === 0) return undefined;
    const executions = this.calls.get(callKeyOf(run, callId, params));
    const call = executions?.shift();
    if (call && call.state !== 'started') this.replayed.calls += 1;
    return call;
  }

  /** The total usage a run ended with, when the journal holds its end. */
  totalOf(run: string): UsageSummary | undefined {
    return this.totals.get(run);
  }
}

/** The session a tree with these journaled events is in (JOURNAL-9): 0 for none (a journal begun now), else one more than the resumes they hold. */
export function journalSession(events: readonly TraceEvent[]): number {
  if (events.length === 0) return 0;
  return events.filter((event) => event.event === 'journal.resumed').length + 1;
}

function answerKey(run: string, step: unknown, attempt: unknown): string {
  return `${run}\u0000${String(step)}\u0000${String(attempt)}`;
}

/** An execution's identity: its run, its call id and its parameters as traced (references resolved). */
function callKeyOf(run: string, callId: string, params: unknown): string {
  return `${run}\u0000${callId}\u0000${canonicalJson(params ?? {})}`;
}

function isUsageSummary(value: unknown): value is UsageSummary {
  return typeof value === 'object' && value !== null && typeof (value as UsageSummary).inputTokens === 'number';
}
