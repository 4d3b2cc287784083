/** A replayed model whose cassette one run tree uses (spec/cassettes.md CAS-16, CAS-17): shared by a tree's processes, fresh for each tree; any other model as it is. */
import type { Model } from '../protocol/model.js';
import { type CassetteClaims, LocalCassetteClaims } from './cassette-claims.js';
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

/**
 * `model` for one run tree started from outside (CAS-17): a replayed cassette with claims of its
 * own, so the tree replays from the cassette's first entry whatever trees the process ran before
 * (a long-running delegate-mcp answers any number of calls); a live model as it is.
 */
export function cassetteForTree(model: Model): Model {
  return shareCassette(model, new LocalCassetteClaims());
}
