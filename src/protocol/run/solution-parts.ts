/** The parts of an accepted answer besides its calls and output: the advisors' opinions (ADV-9) and the meta (MSG-23), and what the run keeps of them. */
import { opinionWrite, votesOf } from '../messages/advisors.js';
import type { CallScope } from '../calls/call-scope.js';
import { isJsonObject, type Solution } from '../types.js';

/** The fields a run's result gains from its answers' parts (MSG-23). */
export interface PartsOfResult {
  /**
   * Present when the context has a meta message: the last meta the model wrote in an accepted
   * answer, or `null` when it wrote none.
   */
  meta?: Record<string, unknown> | null;
}

/** What one run keeps of its answers' parts. */
export class SolutionParts {
  private meta: Record<string, unknown> | undefined;

  constructor(private readonly scope: CallScope) {}

  /**
   * Takes an accepted answer of `step`: each opinion in `advisors` is traced (`advisor.opinion`)
   * and kept at `†advisors.<id>` for its instance (ADV-9); a written `meta` becomes the run's (MSG-23).
   */
  accept(step: number, solution: Solution): void {
    for (const opinion of Array.isArray(solution.advisors) ? solution.advisors : []) {
      if (!isJsonObject(opinion) || typeof opinion.id !== 'string') continue;
      const instance = typeof opinion._instance === 'string' ? opinion._instance : undefined;
      this.scope.trace.emit('advisor.opinion', { step, call: null, advisor: opinion.id, instance: instance ?? null, opinion, votes: votesOf(opinion) });
      this.scope.store.append(opinionWrite(opinion.id, opinion, instance));
    }
    if (isJsonObject(solution.meta)) this.meta = solution.meta;
  }

  /** The fields the run's result and `run.completed` gain (MSG-23): `meta` only when the context has a meta message. */
  resultFields(): PartsOfResult {
    if (!this.scope.store.messages.some((message) => message.type === 'meta')) return {};
    return { meta: this.meta ?? null };
  }
}
