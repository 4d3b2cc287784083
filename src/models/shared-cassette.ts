/** A replayed model whose cassette a run tree's processes share (spec/cassettes.md CAS-16); any other model as it is. */
import type { Model } from '../protocol/model.js';
import type { CassetteClaims } from './cassette-claims.js';
import { ReplayModel } from './replay.js';
import { ReplayStandIn } from './replay-stand-in.js';

/**
 * `model` with its cassette's consumable entries claimed through `claims` (CAS-16): a replay model
 * (or one standing for a live model, CAS-15, which keeps standing for it) becomes the same cassette
 * shared by the tree; a live model is returned as it is.
 */
export function shareCassette(model: Model, claims: CassetteClaims): Model {
  const replay = model instanceof ReplayStandIn ? model.replay : model;
  if (!(replay instanceof ReplayModel)) return model;
  return ReplayStandIn.of(replay.sharing(claims), model.standsFor);
}
