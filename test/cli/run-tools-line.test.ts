/** The tools a run is offered, said once at its start (spec/cli.md CLI-6, trace.md TRACE-3), through the built delegate-run binary. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderWith, runCli, tempDir } from '../helpers/cli.js';

const worker = (name: string) => ({ meta: { name }, context: [{ type: 'system', text: `${name} works.` }], schema: { type: 'string' } });

const files = {
  'team/evaluator.json': worker('evaluator'),
  'team/secret.json': worker('secret'),
  'orchestrator.json': {
    meta: { name: 'orchestrator' },
    context: [
      { type: 'tool', tool: { lookup: { type: 'object', properties: { q: { type: 'string' } }, _output: { type: 'string' } } } },
      { type: 'workers', from: './team/', allow: ['evaluator'] },
    ],
    schema: { type: 'string' },
  },
  'orchestrator.cassette.json': { version: 1, entries: [{ match: { request: 'orchestrator', step: 0 }, solution: { calls: [], output: 'done' } }] },
};

describe('the tools a run is offered (CLI-6)', () => {
  it('names them, worker tools included, once below the run start line, and in run.started', async () => {
    const root = folderWith(files);
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli([join(root, 'orchestrator.json'), '--trace', trace]);
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n');
    const start = lines.findIndex((line) => line.startsWith('▶ orchestrator'));
    expect(lines[start + 1]).toBe('  tools: lookup, evaluator, worker_call');
    expect(lines.filter((line) => line.includes('tools:'))).toHaveLength(1);
    const started = readFileSync(trace, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((event) => event.event === 'run.started');
    expect(started.tools).toEqual(['lookup', 'evaluator', 'worker_call']);
  });

  it('still begins the trace with run.started, without tools, when preparing the run fails (TRACE-11)', async () => {
    const broken = { ...files, 'orchestrator.json': { ...files['orchestrator.json'], context: [{ type: 'workers', from: './team/', allow: ['nobody'] }] } };
    const root = folderWith(broken);
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli([join(root, 'orchestrator.json'), '--trace', trace]);
    expect(result.code).not.toBe(0);
    const events = readFileSync(trace, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(events.map((event) => event.event)).toEqual(['run.started', 'run.failed']);
    expect(events[0]).not.toHaveProperty('tools');
    expect(result.stderr).not.toContain('tools:');
  });

  it('says nothing of them with --quiet', async () => {
    const root = folderWith(files);
    const result = await runCli([join(root, 'orchestrator.json'), '--quiet']);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('tools:');
  });
});
