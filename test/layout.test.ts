/**
 * The folder layout (docs/10-architecture.md): the core imports nothing from the folders built on it,
 * reads or writes no files, and stands in rooms that form a strict order.
 *
 * The rooms of src/protocol, from the ground up; a file imports values only from its own room or
 * the rooms below it, and may name the types of any room:
 *   ground     the files at the top of src/protocol: the document vocabulary (types.ts), the run's
 *              contracts (contracts.ts), errors, JSON, schemas, the model contract, usage, budget, ids
 *   trace/     the trace's vocabulary, the tracer and the journal (spec/trace.md, spec/journal.md)
 *   variables/ references, the data they read and write, and the plan's graph (spec/variables.md)
 *   tools/     tools, their meta-properties and rules, the built-in tools (spec/tools-and-activities.md)
 *   messages/  the message handlers and their pipeline: loading and rendering a Request (spec/messages.md)
 *   context/   a run's live context and its scopes (spec/scopes.md)
 *   calls/     one call, a batch, a plan, a child run (spec/calls.md, spec/plans.md, spec/delegation.md)
 *   run/       the loop and the Runtime (spec/loop.md)
 * Nothing in src/ imports values in a loop, and no files of src/protocol name each other's types in
 * a loop of more than two. Imports are read from their lines: `import type` and braces whose every
 * name is marked `type` are type-only; dynamic `import()` is not followed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const PROTOCOL = join(SRC, 'protocol');

/** The rooms of src/protocol, from the ground up: '' is the top of the folder. */
const ROOMS = ['', 'trace', 'variables', 'tools', 'messages', 'context', 'calls', 'run'] as const;

/** The files the ground holds: every other file of src/protocol stands in a room's folder. */
const GROUND = [
  'budget.ts',
  'cancellation.ts',
  'constants.ts',
  'contracts.ts',
  'errors.ts',
  'ids.ts',
  'json-data.ts',
  'json.ts',
  'model.ts',
  'nearest-name.ts',
  'read-document.ts',
  'schemas.ts',
  'types.ts',
  'usage.ts',
  'value-shape.ts',
];

/** One relative import of a source file: the file it names, and whether it takes only types. */
interface Import {
  target: string;
  typeOnly: boolean;
}

// `import`/`export` … `from '…'` at the start of a line: a default name, `* as name`, `{ … }` (on
// several lines too), or a default name and one of the others; and a bare `import '…'`.
const IMPORT_LINE =
  /^(?:import|export)\s+(type\s+)?(\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+[\w$]+))?)\s+from\s+'([^']+)'|^import\s+'([^']+)'/gm;

/** The relative imports of a source file, resolved to the .ts files they name. */
function importsOf(file: string): Import[] {
  return importsIn(readFileSync(file, 'utf8'), file);
}

/** The relative imports written in `text`, the text of `file`. */
function importsIn(text: string, file: string): Import[] {
  const imports: Import[] = [];
  for (const match of text.matchAll(IMPORT_LINE)) {
    const [, typeKeyword, clause, from, bare] = match;
    const specifier = (from ?? bare) as string;
    if (!specifier.startsWith('.')) continue;
    const names = clause?.startsWith('{')
      ? clause
          .slice(1, -1)
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean)
      : [];
    const typeOnly = typeKeyword !== undefined || (names.length > 0 && names.every((name) => name.startsWith('type ')));
    imports.push({ target: resolve(dirname(file), specifier.replace(/\.js$/, '.ts')), typeOnly });
  }
  return imports;
}

/** The file import graph of `files`: each file and the files of the set it imports (values only, or all). */
function fileGraph(files: string[], valuesOnly: boolean): Map<string, Set<string>> {
  const known = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      new Set(
        importsOf(file)
          .filter((entry) => known.has(entry.target) && !(valuesOnly && entry.typeOnly))
          .map((entry) => entry.target),
      ),
    ]),
  );
}

/** The strongly connected parts of a graph that hold more than one node (Tarjan): its loops. */
function loopsOf(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      part.push(member);
    } while (member !== node);
    if (part.length > 1) loops.push(part.map((file) => relative(SRC, file)).sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return loops;
}

/** The room of a file of src/protocol: its folder's, or the ground's at the top; undefined in a folder that is no room. */
function roomOf(file: string): (typeof ROOMS)[number] | undefined {
  const [first, ...rest] = relative(PROTOCOL, file).split('/');
  if (rest.length === 0) return '';
  return ROOMS.find((room) => room === first);
}

/** The folder import graph of src/: each top folder and the top folders its files import from. */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourcesUnder(SRC)) {
    const [from] = relative(SRC, file).split('/');
    if (from === undefined || from.endsWith('.ts')) continue;
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const match of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const [to] = relative(SRC, resolve(dirname(file), match[1] as string)).split('/');
      if (to !== undefined && to !== from && !to.startsWith('..') && !to.endsWith('.js')) edges.add(to);
    }
  }
  return graph;
}

/** A cycle of folders in the graph, as a path, or undefined. */
function cycleIn(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const visit = (folder: string, path: string[]): string[] | undefined => {
    if (state.get(folder) === 'open') return [...path, folder];
    if (state.get(folder) === 'done') return undefined;
    state.set(folder, 'open');
    for (const next of graph.get(folder) ?? []) {
      const found = visit(next, [...path, folder]);
      if (found) return found;
    }
    state.set(folder, 'done');
    return undefined;
  };
  for (const folder of graph.keys()) {
    const found = visit(folder, []);
    if (found) return found;
  }
  return undefined;
}

function sourcesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('the layout', () => {
  it('keeps src/protocol free of imports from the other folders and of vendor SDKs', () => {
    const offending: string[] = [];
    for (const file of sourcesUnder(PROTOCOL)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)) {
        const target = match[1] as string;
        // Relative imports must stay inside src/protocol, from whichever of its folders they are
        // written; the document schemas of spec/schemas are the protocol's own, imported as JSON modules.
        const resolved = relative(PROTOCOL, resolve(dirname(file), target));
        const upward = target.startsWith('.') && resolved.startsWith('..') && !/^\.\.\/\.\.\/spec\/schemas\/[\w.-]+\.json$/.test(resolved);
        const vendor = /^(openai|@anthropic-ai\/|@modelcontextprotocol\/|undici)/.test(target);
        if (upward || vendor) offending.push(`${file}: ${target}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('has no cycle between the folders of src/: every arrow points down towards protocol', () => {
    const graph = folderGraph();
    expect(graph.get('protocol')).toEqual(new Set());
    expect(cycleIn(graph)).toBeUndefined();
  });

  it('keeps src/protocol free of file I/O: files are read and written at the edge (src/files)', () => {
    const offending = sourcesUnder(PROTOCOL).filter((file) => /from 'node:fs(\/promises)?'/.test(readFileSync(file, 'utf8')));
    expect(offending).toEqual([]);
  });

  it('reads which imports take values and which take only types', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { type B, c } from './b.js';",
      "import {\n  type D,\n  type E,\n} from './d.js';",
      "export { f } from './f.js';",
      "export type { G } from './g.js';",
      "import h, { type H } from './h.js';",
      "import * as i from './i.js';",
      "import './j.js';",
      "import { k } from 'vendor';",
    ].join('\n');
    const read = importsIn(text, join(PROTOCOL, 'x.ts')).map((entry) => [basename(entry.target), entry.typeOnly]);
    expect(read).toEqual([
      ['a.ts', true],
      ['b.ts', false],
      ['d.ts', true],
      ['f.ts', false],
      ['g.ts', true],
      ['h.ts', false],
      ['i.ts', false],
      ['j.ts', false],
    ]);
  });

  it('has no value-import cycle anywhere in src/: a dependency that would point back is handed down instead', () => {
    expect(loopsOf(fileGraph(sourcesUnder(SRC), true))).toEqual([]);
  });

  it('has no import circle in src/protocol, type imports included, of more than two files', () => {
    const circles = loopsOf(fileGraph(sourcesUnder(PROTOCOL), false)).filter((circle) => circle.length > 2);
    expect(circles).toEqual([]);
  });

  it('keeps the top of src/protocol to the ground files, and every folder of it a room', () => {
    const top = sourcesUnder(PROTOCOL)
      .filter((file) => dirname(file) === PROTOCOL)
      .map((file) => basename(file));
    expect(top.filter((name) => !GROUND.includes(name))).toEqual([]);
    const folders = new Set(
      sourcesUnder(PROTOCOL)
        .map((file) => relative(PROTOCOL, file).split('/'))
        .filter((parts) => parts.length > 1)
        .map((parts) => parts[0]),
    );
    expect([...folders].filter((folder) => !ROOMS.includes(folder as (typeof ROOMS)[number]))).toEqual([]);
  });

  it('lets values flow one way through the rooms of src/protocol: a file imports values only from its room or the rooms below', () => {
    const upward: string[] = [];
    for (const file of sourcesUnder(PROTOCOL)) {
      const room = roomOf(file);
      if (room === undefined) continue;
      for (const entry of importsOf(file)) {
        if (entry.typeOnly || !entry.target.startsWith(PROTOCOL)) continue;
        const target = roomOf(entry.target);
        if (target !== undefined && ROOMS.indexOf(target) > ROOMS.indexOf(room)) upward.push(`${relative(SRC, file)} -> ${relative(SRC, entry.target)}`);
      }
    }
    expect(upward).toEqual([]);
  });
});
