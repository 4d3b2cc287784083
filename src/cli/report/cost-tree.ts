/** The cost tree of a trace: its runs, how they nest, and each run's model answers, the one source of its dollars (spec/cli.md CLI-17). */
import type { TraceEventBase, TraceEventOf } from '../../protocol/trace/events.js';
import { type Usage, tokensOf } from '../../protocol/usage.js';
import type { TraceRun } from '../../viewer/trace-run.js';
import { RunIndex } from './run-index.js';
import { foldEvent, type TraceHandlers } from './trace-fold.js';

/** One model answer (`model.response`) as the cost tree keeps it. */
export interface CostAnswer {
  step: number;
  /** The model that answered: `replay:<cassette>` for a replayed answer. */
  model: string;
  /** The model a replayed answer stands for (CAS-14). */
  replayOf?: string;
  usage: Usage;
  /** The cost the trace recorded; `null` when unknown. */
  costUsd: number | null;
  /** What a delegate running elsewhere (an A2A agent) reported it used, priced as reported (DEL-37). */
  remote?: true;
}

/** How a run ended, as the trace tells it; `unfinished` when the trace holds no end for it. */
export type CostRunStatus = 'done' | 'failed' | 'cancelled' | 'unfinished';

/** One run of the tree. */
export interface CostRun extends TraceRun {
  /** The model `run.started` (else `delegate.started`) named; `null` when none. */
  model: string | null;
  /** The tier the run was delegated at (`delegate.started.tier`); `null` when none. */
  tier: string | null;
  status: CostRunStatus;
  /** The failure code of a failed or cancelled run. */
  code?: string;
  /** Its own model answers, in trace order (every attempt, LOOP-15). */
  answers: CostAnswer[];
  /** Child run ids, in the order they first appear. */
  children: string[];
  /** How many attempts a queued child's job took, when more than one (`queue.job`, TRACE-22): its answers are every attempt's (QUEUE-32). */
  attempts?: number;
}

/** The model an answer is labelled and priced as: the one a replayed answer stands for, else the one that answered (CAS-14). */
export function answerModel(answer: CostAnswer): string {
  return answer.replayOf ?? answer.model;
}

/** Whether a replay cassette gave the answer (CAS-8). */
export function isReplayed(answer: CostAnswer): boolean {
  return answer.model.startsWith('replay:');
}

/**
 * The runs of a trace and their answers. Feed it events in trace order with `apply`; it reads
 * `model.response` for tokens and cost (and a remote delegation's end for what its A2A agent
 * reported, DEL-37), `run.started` and `delegate.started` for names, parents, depth, models and
 * tiers, `queue.job` for a queued child's attempts, and the end events for each run's status.
 * Anything else is ignored, so traces with more fields or more events than it knows read the same.
 */
export class CostTree {
  private readonly index = new RunIndex<CostRun>();

  /** What each event the tree reads changes. */
  private readonly handlers: TraceHandlers<void> = {
    // A resumed run is named as a started one (JOURNAL-6).
    'run.resumed': (event) => this.started(event),
    'run.started': (event) => this.started(event),
    'delegate.started': (event) => {
      const child = this.ensure(event.child, event.run, event.depth + 1);
      if (typeof event.name === 'string' && child.name === child.run) child.name = event.name;
      child.model ??= event.model ?? null;
      child.tier = event.tier ?? child.tier;
    },
    'model.response': (event) => {
      const run = this.ensure(event.run, event.parent, event.depth);
      // Built field by field: a literal with a conditional spread takes V8's slow path, once per answer.
      const answer: CostAnswer = { step: event.step, model: event.model, usage: tokensOf(event.usage), costUsd: event.costUsd };
      if (event.replayOf !== undefined) answer.replayOf = event.replayOf;
      run.answers.push(answer);
    },
    'queue.job': (event) => {
      // A job taken over shows each attempt (QUEUE-8); the abandoned attempts' answers are the run's too, paid all the same.
      const run = this.ensure(event.run, event.parent, event.depth);
      if (event.attempt > (run.attempts ?? 1)) run.attempts = event.attempt;
    },
    'run.completed': (event) => this.end(this.ensure(event.run, event.parent, event.depth), 'done'),
    'run.failed': (event) => this.end(this.ensure(event.run, event.parent, event.depth), failedStatus(event.code), event.code),
    // A child's own end comes first (TRACE-11); these only end a child the trace shows no end of.
    'delegate.completed': (event) => {
      const child = event.child === null ? undefined : this.index.get(event.child);
      if (child) this.remoteAnswer(child, event.usage);
      if (child) this.end(child, 'done');
    },
    'delegate.failed': (event) => {
      const child = event.child === null ? undefined : this.index.get(event.child);
      if (child) this.remoteAnswer(child, event.usage);
      if (child) this.end(child, failedStatus(event.code), event.code);
    },
  };

  /** Takes one event into the tree. */
  apply(event: TraceEventBase): void {
    foldEvent(event, this.handlers, undefined);
  }

  private started(event: TraceEventOf<'run.started'> | TraceEventOf<'run.resumed'>): void {
    const run = this.ensure(event.run, event.parent, event.depth);
    run.name = typeof event.name === 'string' ? event.name : fileName(event.request);
    run.model = event.model ?? run.model;
  }

  /** The runs with no parent in the trace (normally one: the top run). */
  get roots(): CostRun[] {
    return this.index.roots;
  }

  /** A run's children, in the order they first appeared. */
  childrenOf(run: CostRun): CostRun[] {
    return this.index.childrenOf(run);
  }

  /** Every run, depth first, parents before their children. */
  runs(): CostRun[] {
    return this.index.depthFirst();
  }

  private ensure(run: string, parent: string | null, depth: number): CostRun {
    return this.index.ensure(run, parent, () => ({ run, parent, depth, name: run, model: null, tier: null, status: 'unfinished', answers: [], children: [] }));
  }

  /** An A2A agent's reported usage (DEL-37) as the one answer of its run: the trace holds no model answer of it. */
  private remoteAnswer(run: CostRun, usage: TraceEventOf<'delegate.completed'>['usage'] | undefined): void {
    if (usage?.remote !== true) return;
    run.answers.push({ step: 0, model: usage.model ?? run.model ?? 'remote', usage: tokensOf(usage), costUsd: usage.costUsd, remote: true });
  }

  private end(run: CostRun, status: Exclude<CostRunStatus, 'unfinished'>, code?: string): void {
    if (run.status !== 'unfinished') return;
    run.status = status;
    if (code !== undefined) run.code = code;
  }
}

/** How a failure ends a run: a cancel is `cancelled`, anything else `failed`. */
function failedStatus(code: string): 'failed' | 'cancelled' {
  return code === 'cancelled_by_user' ? 'cancelled' : 'failed';
}

/** A request name from a location when the trace gives none: the file name without `.json`. */
function fileName(location: string): string {
  return (location.split(/[\\/]/).pop() ?? location).replace(/\.json$/, '');
}
