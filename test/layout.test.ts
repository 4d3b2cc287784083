/** The folder layout the README describes: the core imports nothing from the folders built on it, and reads or writes no files. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const PROTOCOL = join(SRC, 'protocol');

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
});
