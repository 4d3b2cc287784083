/** Property tests of plan scheduling: no call runs before the values it references exist, and every cycle is refused. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { RequestError } from '../../src/protocol/errors.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { Activity } from '../../src/protocol/contracts.js';
import { Tracer, memorySink, type TraceEvent } from '../../src/protocol/trace/trace.js';
import type { Message } from '../../src/protocol/types.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(50);

/** A generated graph: `deps[i]` lists the calls call `i` reads from; `order` is the order calls are written in. */
interface Graph {
  deps: number[][];
  order: number[];
  delays: number[];
  /** Nodes whose `v<i>` already holds a stale value before the plan runs (its readers must still wait for the write). */
  stale?: number[];
  /** Varies how a read is written: a whole reference, or one embedded in a template string. */
  salt: number;
}

/** Whether call `node` reads dependency `dep` through a template string (`"got †state.v1"`) rather than a whole reference. */
const templated = (graph: Graph, node: number, dep: number) => (node * 7 + dep + graph.salt) % 3 === 0;
const readOf = (graph: Graph, node: number, dep: number) => (templated(graph, node, dep) ? `got †state.v${dep}` : `†state.v${dep}`);
const resolvedOf = (graph: Graph, node: number, dep: number) => (templated(graph, node, dep) ? `got value${dep}` : `value${dep}`);

/** Random DAGs: edges only go from a later node to an earlier one, then the calls are shuffled. */
const dagArbitrary: fc.Arbitrary<Graph> = fc.integer({ min: 1, max: 7 }).chain((size) =>
  fc.record({
    deps: fc.tuple(
      ...Array.from({ length: size }, (_, node) => (node === 0 ? fc.constant([] as number[]) : fc.subarray(Array.from({ length: node }, (_, j) => j)))),
    ),
    order: fc.shuffledSubarray(
      Array.from({ length: size }, (_, node) => node),
      { minLength: size, maxLength: size },
    ),
    delays: fc.tuple(...Array.from({ length: size }, () => fc.integer({ min: 0, max: 4 }))),
    salt: fc.nat({ max: 2 }),
    stale: fc.subarray(Array.from({ length: size }, (_, node) => node)),
  }),
);

/** Graphs with at least one cycle: a DAG plus one or more back edges (never a self-loop). */
const cyclicArbitrary: fc.Arbitrary<Graph> = fc.integer({ min: 2, max: 7 }).chain((size) =>
  fc
    .record({
      base: fc.tuple(...Array.from({ length: size }, (_, node) => fc.subarray(Array.from({ length: node }, (_, j) => j)))),
      // A back edge from `from` to a later node `to` closes a cycle when `to` reaches `from`; the forced chain makes sure it does.
      from: fc.nat({ max: size - 2 }),
      span: fc.nat({ max: size - 1 }),
      extra: fc.array(fc.tuple(fc.nat({ max: size - 1 }), fc.nat({ max: size - 1 })), { maxLength: 3 }),
      order: fc.shuffledSubarray(
        Array.from({ length: size }, (_, node) => node),
        { minLength: size, maxLength: size },
      ),
      delays: fc.tuple(...Array.from({ length: size }, () => fc.integer({ min: 0, max: 4 }))),
      salt: fc.nat({ max: 2 }),
    })
    .map(({ base, from, span, extra, order, delays, salt }) => {
      const deps = base.map((list) => [...list]);
      const to = Math.min(size - 1, from + 1 + (span % (size - 1 - from)));
      // The chain to → to-1 → ... → from, plus from → to, is a cycle.
      for (let node = from + 1; node <= to; node++) if (!deps[node]!.includes(node - 1)) deps[node]!.push(node - 1);
      if (!deps[from]!.includes(to)) deps[from]!.push(to);
      for (const [a, b] of extra) if (a !== b && !deps[a]!.includes(b)) deps[a]!.push(b);
      return { deps, order, delays, salt };
    }),
);

/** The calls of a graph, in its written order: call `i` reads `†state.v<j>` for its dependencies and writes `†state.v<i>`. */
function callsOf(graph: Graph): Record<string, unknown>[] {
  return graph.order.map((node) => ({
    _tool: 'rec',
    _id: `c${node}`,
    node,
    reads: graph.deps[node]!.map((dep) => readOf(graph, node, dep)),
    _outputPath: `†state.v${node}`,
  }));
}

/** Nodes on some cycle (strongly connected, size > 1) and nodes that (transitively) depend on one. */
function cycleAnalysis(deps: number[][]): { onCycle: Set<number>; blocked: Set<number> } {
  const reaches = (from: number, target: number): boolean => {
    const seen = new Set<number>();
    const stack = [...deps[from]!];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (node === target) return true;
      if (seen.has(node)) continue;
      seen.add(node);
      stack.push(...deps[node]!);
    }
    return false;
  };
  const onCycle = new Set(deps.map((_, node) => node).filter((node) => reaches(node, node)));
  const blocked = new Set(deps.map((_, node) => node).filter((node) => onCycle.has(node) || [...onCycle].some((member) => reaches(node, member))));
  return { onCycle, blocked };
}

/** A recorder Activity: at start it notes which `v<j>` exist in the scoped state and what it was given; it ends after a delay. */
function recorder(delays: number[]) {
  let clock = 0;
  const starts = new Map<number, { at: number; present: string[]; reads: unknown }>();
  const ends = new Map<number, number>();
  const activity: Activity = async (call, _tool, context) => {
    const node = call.node as number;
    const state = context.find((message: Message) => message.type === 'state')?.state as Record<string, unknown> | undefined;
    if (starts.has(node)) throw new Error(`c${node} ran twice`);
    starts.set(node, { at: clock++, present: Object.keys(state ?? {}), reads: call.reads });
    await new Promise((resolve) => setTimeout(resolve, delays[node] ?? 0));
    ends.set(node, clock++);
    return `value${node}`;
  };
  return { activity, starts, ends };
}

const TOOL = { type: 'tool', tool: { rec: { properties: { node: { type: 'integer' }, reads: { type: 'array' } }, _scopes: ['state'] } } };

function documentOf(calls: Record<string, unknown>[] | undefined, stale: number[] = []) {
  const state = Object.fromEntries(stale.map((node) => [`v${node}`, `stale${node}`]));
  return {
    meta: { name: 'planner' },
    context: [
      { type: 'system', text: 'Run the plan.' },
      TOOL,
      ...(calls ? [{ type: 'plan', calls }] : []),
      ...(stale.length > 0 ? [{ type: 'state', state }] : []),
    ],
    schema: { type: 'string' },
  };
}

/** Every call that ran started after all its dependencies completed, saw their values, and was given them. */
function expectDependencyOrder(
  graph: Graph,
  nodes: Iterable<number>,
  starts: ReturnType<typeof recorder>['starts'],
  ends: ReturnType<typeof recorder>['ends'],
) {
  const { deps } = graph;
  for (const node of nodes) {
    const start = starts.get(node);
    expect(start, `c${node} ran`).toBeDefined();
    for (const dep of deps[node]!) {
      const end = ends.get(dep);
      expect(end, `c${dep}, a dependency of c${node}, completed`).toBeDefined();
      expect(end!).toBeLessThan(start!.at);
      expect(start!.present).toContain(`v${dep}`);
    }
    expect(start!.reads).toEqual(deps[node]!.map((dep) => resolvedOf(graph, node, dep)));
  }
}

function failures(events: TraceEvent[]): Map<string, { code: string; message: string }> {
  return new Map(
    events.filter((event) => event.event === 'call.failed').map((event) => [String(event.call), event.error as { code: string; message: string }]),
  );
}

describe('plan scheduling', () => {
  it('runs every call of an acyclic plan once, each only after all its dependencies completed, even over stale values', async () => {
    await fc.assert(
      fc.asyncProperty(dagArbitrary, async (graph) => {
        const { activity, starts, ends } = recorder(graph.delays);
        const runtime = new Runtime({ activities: { rec: activity } });
        const model = new ReplayModel([{ solution: { calls: [], output: 'done' }, repeat: true }]);
        const sink = memorySink();
        const result = await runtime.run(runtime.validate(documentOf(callsOf(graph), graph.stale)), { model, tracer: new Tracer([sink]) });
        expect(result.ok).toBe(true);
        expect(failures(sink.events).size).toBe(0);
        expect(starts.size).toBe(graph.deps.length);
        expectDependencyOrder(
          graph,
          graph.deps.map((_, node) => node),
          starts,
          ends,
        );
        // The plan ran before the model was asked.
        const firstRequest = sink.events.findIndex((event) => event.event === 'model.request');
        const lastCompletion = sink.events.findLastIndex((event) => event.event === 'call.completed');
        expect(lastCompletion).toBeLessThan(firstRequest);
      }),
      settings,
    );
  });

  it('refuses a cyclic plan at load time with invalid_request, naming the calls of a real cycle', () => {
    const runtime = new Runtime();
    fc.assert(
      fc.property(cyclicArbitrary, (graph) => {
        let thrown: unknown;
        try {
          runtime.validate(documentOf(callsOf(graph)));
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(RequestError);
        const error = thrown as RequestError;
        expect(error.code).toBe('invalid_request');
        expect(error.problems.some((problem) => problem.pointer === '/context/2/calls')).toBe(true);
        // "cN (rec) waits for cM (rec), ..." must be a closed walk along real dependency edges.
        const edges = [...error.message.matchAll(/c(\d+) \(rec\) waits for c(\d+) \(rec\)/g)].map((match) => [Number(match[1]), Number(match[2])] as const);
        expect(edges.length).toBeGreaterThan(0);
        edges.forEach(([reader, writer], index) => {
          expect(graph.deps[reader]).toContain(writer);
          expect(edges[(index + 1) % edges.length]![0]).toBe(writer);
        });
      }),
      settings,
    );
  });

  it('never runs a call of a cycle the model answers with; each fails with unresolved_reference while the rest run in order', async () => {
    await fc.assert(
      fc.asyncProperty(cyclicArbitrary, async (graph) => {
        const { onCycle, blocked } = cycleAnalysis(graph.deps);
        expect(onCycle.size).toBeGreaterThan(1);
        const { activity, starts, ends } = recorder(graph.delays);
        const runtime = new Runtime({ activities: { rec: activity } });
        const model = new ReplayModel([
          { match: { step: 0 }, solution: { calls: callsOf(graph), output: null } },
          { match: { step: 1 }, solution: { calls: [], output: 'done' } },
        ]);
        const sink = memorySink();
        const result = await runtime.run(runtime.validate(documentOf(undefined)), { model, tracer: new Tracer([sink]) });
        expect(result.ok).toBe(true);
        const failed = failures(sink.events);
        for (const node of blocked) {
          expect(starts.has(node), `c${node} must not run`).toBe(false);
          expect(failed.get(`c${node}`)?.code, `c${node} fails`).toBe('unresolved_reference');
        }
        const free = graph.deps.map((_, node) => node).filter((node) => !blocked.has(node));
        expect(new Set(starts.keys())).toEqual(new Set(free));
        expectDependencyOrder(graph, free, starts, ends);
        // The model hears about every failure at the next step.
        const next = model.requests.find((request) => request.step === 1)!;
        const prompt = next.messages.map((message) => message.content).join('\n');
        for (const node of blocked) expect(prompt).toContain(`"_id":"c${node}"`);
      }),
      settings,
    );
  });
});
