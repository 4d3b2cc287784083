/** A replayed model standing for a live one (spec/cassettes.md CAS-15): the cassette answers, while gating and tier choice see the live model. */
import type { Model, ModelRequest, ModelResponse, SchemaForm } from '../protocol/model.js';

/** A model that can say which live model a run's recorded answers came from (the replay model: its entries' `model`). */
export interface RecordedModels {
  /** The `model` of the first entry whose `match.request` is the run's request name, if any names one. */
  modelFor(requestName: string): string | undefined;
}

/**
 * The same replay model under another part: its `id` stays the cassette's (every part is still
 * played by it, DEL-16), and `standsFor` names the live model the run would use. Answers come from
 * the one replay model, so entries are consumed once across the tree.
 */
export class ReplayStandIn implements Model {
  readonly id: string;

  private constructor(
    /** The replay model that answers. */
    readonly replay: Model,
    readonly standsFor: string,
  ) {
    this.id = replay.id;
  }

  /** `model` standing for `standsFor` (the replay model underneath when `model` already stands for another), or `model` as it is when `standsFor` is unknown or unchanged. */
  static of(model: Model, standsFor: string | undefined): Model {
    if (standsFor === undefined || model.standsFor === standsFor) return model;
    return new ReplayStandIn(model instanceof ReplayStandIn ? model.replay : model, standsFor);
  }

  /** Answers with the replay model underneath. */
  generate(request: ModelRequest): Promise<ModelResponse> {
    return this.replay.generate(request);
  }

  /** The form of the model underneath (MODEL-17): a live model chosen under another part still says how strictly it sends. */
  schemaFormOf(request: Pick<ModelRequest, 'schema' | 'plainText'>): SchemaForm | undefined {
    return this.replay.schemaFormOf?.(request);
  }
}

/** The live model a replayed run's cassette names for it (CAS-15), when `model` can say. */
export function recordedModelFor(model: Model, requestName: string): string | undefined {
  const replay = model instanceof ReplayStandIn ? model.replay : model;
  const recorded = (replay as Partial<RecordedModels>).modelFor;
  return typeof recorded === 'function' ? recorded.call(replay, requestName) : undefined;
}
