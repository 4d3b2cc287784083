/** Unit tests of src/protocol/variables/plan-graph.ts: what calls read and write, dependencies (VAR-17), cycles (PLAN-4). */
import { describe, expect, it } from 'vitest';
import {
  CycleSearch,
  callLabel,
  dependencyGraph,
  dependsOn,
  describeCycle,
  findCycle,
  overlaps,
  readsOf,
  writesOf,
} from '../../src/protocol/variables/plan-graph.js';
import type { Call } from '../../src/protocol/types.js';
import { parseReference, type Reference } from '../../src/protocol/variables/references.js';

const texts = (references: Reference[]) => references.map((reference) => reference.text);
const ref = (text: string) => parseReference(text) as Reference;

describe('readsOf', () => {
  it('finds references in every parameter, at any depth, in templates and expressions, and in a latent _output (VAR-4)', () => {
    const call: Call = {
      _tool: 't',
      a: '†input.name',
      b: { deep: ['†state.items[0].id'] },
      c: 'Hello †input.first and †state["odd key"]!',
      d: '†input.team || †state.defaults.team',
      e: '†state.x && †state.y',
      _output: { title: '†state.greeting' },
      _instance: 'fr',
    };
    expect(texts(readsOf(call))).toEqual([
      '†input.name',
      '†state.items[0].id',
      '†input.first',
      '†state["odd key"]',
      '†input.team',
      '†state.defaults.team',
      '†state.x',
      '†state.y',
      '†state.greeting',
    ]);
  });

  it('does not read _outputPath: it names where to write', () => {
    expect(readsOf({ _tool: 't', _outputPath: '†state.x' })).toEqual([]);
  });

  it('does not read object keys', () => {
    expect(readsOf({ _tool: 't', map: { '†state.key': 1 } })).toEqual([]);
  });
});

describe('writesOf', () => {
  it('is the one target of a plain _outputPath', () => {
    expect(texts(writesOf({ _tool: 't', _outputPath: '†output.card' }))).toEqual(['†output.card']);
  });

  it('is every target of an alternative (||) or a fan-out (&&) _outputPath (VAR-10, VAR-11)', () => {
    expect(texts(writesOf({ _tool: 't', _outputPath: '†state.ok || †state.failed' }))).toEqual(['†state.ok', '†state.failed']);
    expect(texts(writesOf({ _tool: 't', _outputPath: '†state.a && †output.b && †log' }))).toEqual(['†state.a', '†output.b', '†log']);
  });

  it('is nothing without an _outputPath, or with one that does not parse', () => {
    expect(writesOf({ _tool: 't' })).toEqual([]);
    expect(writesOf({ _tool: 't', _outputPath: 'state.x' })).toEqual([]);
    expect(writesOf({ _tool: 't', _outputPath: '†state.x || †y && †z' })).toEqual([]);
  });
});

describe('overlaps (VAR-17)', () => {
  it('is true for the same kind when one path is a prefix of the other, either way', () => {
    expect(overlaps(ref('†state'), ref('†state.a.b'))).toBe(true);
    expect(overlaps(ref('†state.a.b'), ref('†state.a'))).toBe(true);
    expect(overlaps(ref('†state.a'), ref('†state.a'))).toBe(true);
  });

  it('is false for different kinds or diverging paths', () => {
    expect(overlaps(ref('†state.a'), ref('†input.a'))).toBe(false);
    expect(overlaps(ref('†state.a.b'), ref('†state.a.c'))).toBe(false);
    expect(overlaps(ref('†state.ab'), ref('†state.a'))).toBe(false);
  });

  it('treats an index and the same digits as a key alike', () => {
    expect(overlaps(ref('†state.list[0]'), ref('†state.list.0'))).toBe(true);
    expect(overlaps(ref('†state.list[0]'), ref('†state.list[1]'))).toBe(false);
  });
});

describe('dependsOn (VAR-17)', () => {
  const writer: Call = { _tool: 'w', _outputPath: '†state.greeting' };

  it('is true when the reader reads what the writer declares it writes', () => {
    expect(dependsOn({ _tool: 'r', g: '†state.greeting.text' }, writer)).toBe(true);
    expect(dependsOn({ _tool: 'r', g: '†state' }, writer)).toBe(true);
  });

  it('is true for a read through any side of an expression, and for a write to any target', () => {
    expect(dependsOn({ _tool: 'r', g: '†input.greeting || †state.greeting' }, writer)).toBe(true);
    expect(dependsOn({ _tool: 'r', g: '†state.other' }, { _tool: 'w', _outputPath: '†state.x || †state.other' })).toBe(true);
    expect(dependsOn({ _tool: 'r', g: '†state.other' }, { _tool: 'w', _outputPath: '†state.x && †state.other' })).toBe(true);
  });

  it('is false when nothing read overlaps, when the writer writes nothing, and for a call and itself', () => {
    expect(dependsOn({ _tool: 'r', g: '†state.other' }, writer)).toBe(false);
    expect(dependsOn({ _tool: 'r', g: '†state.greeting' }, { _tool: 'w' })).toBe(false);
    const both: Call = { _tool: 'x', g: '†state.n', _outputPath: '†state.n' };
    expect(dependsOn(both, both)).toBe(false);
  });

  it('makes every reader wait for a global writer, whatever the reader instance', () => {
    expect(dependsOn({ _tool: 'r', g: '†state.greeting', _instance: 'fr' }, writer)).toBe(true);
  });

  it('makes a reader wait for an instance writer only on the same instance (DATA-5)', () => {
    const french: Call = { ...writer, _instance: 'fr' };
    expect(dependsOn({ _tool: 'r', g: '†state.greeting', _instance: 'fr' }, french)).toBe(true);
    expect(dependsOn({ _tool: 'r', g: '†state.greeting', _instance: 'de' }, french)).toBe(false);
    expect(dependsOn({ _tool: 'r', g: '†state.greeting' }, french)).toBe(false);
  });
});

describe('dependencyGraph', () => {
  it('lists for each call the indices of the calls it waits for', () => {
    const calls: Call[] = [
      { _tool: 'card', g: '†state.greeting', t: '†state.team', _outputPath: '†output' },
      { _tool: 'greet', _outputPath: '†state.greeting' },
      { _tool: 'team', _outputPath: '†state.team' },
    ];
    expect(dependencyGraph(calls)).toEqual([[1, 2], [], []]);
  });
});

describe('findCycle (PLAN-4)', () => {
  it('is undefined for calls without a cycle, whatever their order', () => {
    const calls: Call[] = [
      { _tool: 'c', x: '†state.b', _outputPath: '†output' },
      { _tool: 'b', x: '†state.a', _outputPath: '†state.b' },
      { _tool: 'a', _outputPath: '†state.a' },
    ];
    expect(findCycle(calls)).toBeUndefined();
    expect(findCycle([])).toBeUndefined();
  });

  it('returns the indices of a cycle in dependency order, leaving out calls outside it', () => {
    const calls: Call[] = [
      { _tool: 'free', _outputPath: '†state.free' },
      { _tool: 'a', x: '†state.c', _outputPath: '†state.a' },
      { _tool: 'b', x: '†state.a', _outputPath: '†state.b' },
      { _tool: 'c', x: '†state.b', _outputPath: '†state.c' },
      { _tool: 'after', x: '†state.c' },
    ];
    const cycle = findCycle(calls);
    expect([...(cycle ?? [])].sort()).toEqual([1, 2, 3]);
    // Each member waits for the next one (and the last for the first).
    for (const [position, index] of (cycle ?? []).entries()) {
      const next = (cycle ?? [])[(position + 1) % (cycle ?? []).length]!;
      expect(dependsOn(calls[index]!, calls[next]!)).toBe(true);
    }
  });

  it('finds a cycle of two calls reading each other through an expression', () => {
    const calls: Call[] = [
      { _tool: 'a', x: '†input.x || †state.b', _outputPath: '†state.a' },
      { _tool: 'b', x: '†state.a', _outputPath: '†state.b' },
    ];
    expect(findCycle(calls)?.sort()).toEqual([0, 1]);
  });

  it('finds no cycle between calls on different instances', () => {
    const calls: Call[] = [
      { _tool: 'a', x: '†state.b', _outputPath: '†state.a', _instance: 'fr' },
      { _tool: 'b', x: '†state.a', _outputPath: '†state.b', _instance: 'de' },
    ];
    expect(findCycle(calls)).toBeUndefined();
  });

  it('does not count a call that reads what it writes itself as a cycle', () => {
    expect(findCycle([{ _tool: 'count', n: '†state.n', _outputPath: '†state.n' }])).toBeUndefined();
  });

  it('finds the cycle at the end of a 10,000-call chain without overflowing the stack (PLAN-9)', () => {
    const size = 10_000;
    const calls: Call[] = Array.from({ length: size }, (_, index) => ({
      _tool: 't',
      x: `†state.v${(index + 1) % size === 0 ? size - 2 : index + 1}`,
      _outputPath: `†state.v${index}`,
    }));
    // v0 waits for v1, ..., v9998 for v9999, and v9999 for v9998.
    expect(findCycle(calls)).toEqual([size - 2, size - 1]);
    expect(findCycle(calls.slice(0, size - 1))).toBeUndefined();
  });
});

describe('CycleSearch (PLAN-4)', () => {
  it('resumes after cycle members are removed and finds what a fresh search of the rest would', () => {
    // 0 → 1 ⇄ 2, 1 → 3 ⇄ 4, 5 → 3: two cycles reached from the first node.
    const edges: number[][] = [[1], [2, 3], [1], [4], [3], [3]];
    const alive = new Set([0, 1, 2, 3, 4, 5]);
    const graph = { nodes: [0, 1, 2, 3, 4, 5], edges: (node: number) => edges[node]!, alive: (node: number) => alive.has(node) };
    const search = new CycleSearch(graph);
    expect(search.next()).toEqual([1, 2]);
    alive.delete(1);
    alive.delete(2);
    expect(search.next()).toEqual(new CycleSearch(graph).next());
    expect(search.next()).toEqual([3, 4]);
    alive.delete(3);
    alive.delete(4);
    expect(search.next()).toBeUndefined();
  });
});

describe('callLabel and describeCycle', () => {
  it('labels a call by its _id and tool, else by its index and tool', () => {
    expect(callLabel({ _tool: 'greet', _id: 'hello' }, 3)).toBe('hello (greet)');
    expect(callLabel({ _tool: 'greet' }, 3)).toBe('#3 (greet)');
  });

  it('names every call of the cycle and what it waits for', () => {
    const calls: Call[] = [
      { _tool: 'a', x: '†state.b', _outputPath: '†state.a' },
      { _tool: 'b', x: '†state.a', _outputPath: '†state.b', _id: 'second' },
    ];
    expect(describeCycle(calls, [0, 1])).toBe('calls form a cycle: #0 (a) waits for second (b), second (b) waits for #0 (a)');
  });
});
