// In-memory run trees for the run-tree bound tests: one Request per node, delegating to its children, and a model that counts its calls in flight.
import { answered } from './step-model.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createDelegateActivity } from '../../src/activities/delegate.js';
import type { Model, ModelRequest, ModelResponse } from '../../src/protocol/model.js';
import type { LoadedRequest } from '../../src/protocol/messages/load-request.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { DELEGATE_ACTIVITY } from '../../src/protocol/constants.js';
import type { RunOptions, RunResult } from '../../src/protocol/contracts.js';
import { runRequest } from '../../src/protocol/run/run-loop.js';
import { TreeBounds, treeLimits } from '../../src/protocol/run/tree-bounds.js';
import type { Call, RequestDocument, ToolSchema } from '../../src/protocol/types.js';
import type { DelegateResolver } from '../../src/activities/delegate.js';

/** A run tree's shape: node `i` delegates once to each node listed in `children[i]`; node 0 is the top. */
export type TreeShape = number[][];

/** The shape whose node `i + 1` is a child of node `parents[i]` (each parent an earlier node). */
export function shapeOf(parents: readonly number[]): TreeShape {
  const shape: TreeShape = [[]];
  for (const [index, parent] of parents.entries()) {
    shape.push([]);
    shape[parent]?.push(index + 1);
  }
  return shape;
}

/** The Request of node `id`: one tool per child, each delegating to that child's Request. */
export function nodeDocument(id: number, shape: TreeShape): RequestDocument {
  const tools: Record<string, ToolSchema> = {};
  for (const child of shape[id] ?? []) tools[`c${child}`] = { type: 'object', properties: { _delegate: { const: `node:${child}` } } };
  return {
    meta: { name: `n${id}` },
    context: [{ type: 'system', text: `Node ${id}.` }, ...(Object.keys(tools).length > 0 ? [{ type: 'tool' as const, tool: tools }] : [])],
    schema: { type: 'string' },
  };
}

/** Answers `node:<id>` with that node's Request. */
export function treeResolver(shape: TreeShape): DelegateResolver {
  return {
    async resolve(reference) {
      const id = Number(reference.slice('node:'.length));
      return { location: reference, name: `n${id}`, document: nodeDocument(id, shape), trusted: true };
    },
  };
}

/**
 * A model for tree runs: at step 0 a node calls each of its children (a leaf answers at once), at
 * step 1 it answers. Each answer is held for `hold(request)`; it records how many of its calls were
 * in flight at most.
 */
export class TreeModel implements Model {
  readonly id = 'test:tree';
  inFlight = 0;
  maxInFlight = 0;
  readonly requests: ModelRequest[] = [];

  constructor(
    private readonly shape: TreeShape,
    private readonly hold: (request: ModelRequest) => Promise<void> = () => Promise.resolve(),
  ) {}

  async generate(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.hold(request);
    } finally {
      this.inFlight--;
    }
    const id = Number(request.requestName.slice(1));
    const children = this.shape[id] ?? [];
    const solution =
      request.step === 0 && children.length > 0
        ? { calls: children.map((child): Call => ({ _tool: `c${child}` })), output: null }
        : { calls: [], output: `n${id} done` };
    return answered(solution, this.id);
  }
}

/** Waits `turns` turns of the event loop (0: a microtask only). */
export async function turns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await nextTurn();
}

/** A Runtime that delegates through `treeResolver(shape)` and keeps the bounds its runs share. */
export class TreeRuntime extends Runtime {
  treeBounds: TreeBounds | undefined;

  constructor(readonly shape: TreeShape) {
    super();
    this.registerActivity(DELEGATE_ACTIVITY, createDelegateActivity({ resolvers: treeResolver(shape) }));
  }

  /** Runs the top run with bounds made here, so tests can watch them. */
  override async run(request: LoadedRequest | RequestDocument, options: RunOptions = {}): Promise<RunResult> {
    const loaded = 'document' in request ? request : this.validate(request);
    let limits: ReturnType<typeof treeLimits>;
    try {
      limits = treeLimits(options);
    } catch {
      // Limits given wrongly fail the run itself, with its trace (LOOP-16).
      return super.run(request, options);
    }
    this.treeBounds = new TreeBounds(limits);
    return runRequest(this, loaded, options, { tree: { meter: undefined, bounds: this.treeBounds } });
  }

  /** Runs the tree from its top node. */
  runTree(options: RunOptions): Promise<RunResult> {
    return this.run({ document: nodeDocument(0, this.shape), location: 'node:0', name: 'n0' }, options);
  }
}

/** A shape: the top node with `width` leaf children. */
export function fan(width: number): TreeShape {
  return [Array.from({ length: width }, (_, index) => index + 1), ...Array.from({ length: width }, () => [])];
}
