/** `--workers-dir` (spec/cli.md CLI-19): a worker created mid-run through the real CLI is written there, never over a file. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderWith, runCli, tempDir } from '../helpers/cli.js';

/** An orchestrator that may create workers, with a cassette creating "critic" and ending. */
function caseFolder(): string {
  return folderWith({
    'orchestrator.json': {
      meta: { name: 'orchestrator' },
      config: { model: 'openai:gpt-4.1-mini' },
      context: [{ type: 'workers', from: './team/', allow: '*', create: true }],
      schema: { type: 'string' },
    },
    'team/evaluator.json': { meta: { name: 'evaluator' }, context: [{ type: 'system', text: 'Evaluate.' }], schema: { type: 'string' } },
    'orchestrator.cassette.json': {
      version: 1,
      entries: [
        {
          match: { request: 'orchestrator', step: 0 },
          solution: { calls: [{ _tool: 'worker_create', name: 'critic', instructions: 'Criticise.', description: 'A critic.' }], output: null },
        },
        { match: { request: 'orchestrator', step: 1 }, solution: { calls: [], output: 'done' } },
      ],
    },
  });
}

describe('--workers-dir (CLI-19)', () => {
  it('writes an approved created worker as <name>.json', async () => {
    const root = caseFolder();
    const dir = join(tempDir(), 'made');
    const result = await runCli([join(root, 'orchestrator.json'), '--approve', 'approve_all', '--workers-dir', dir, '--json']);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'done' });
    expect(JSON.parse(readFileSync(join(dir, 'critic.json'), 'utf8'))).toMatchObject({ meta: { name: 'critic', description: 'A critic.' } });
  });

  it('keeps an existing file, and writes nothing in strict mode', async () => {
    const root = caseFolder();
    const dir = tempDir();
    writeFileSync(join(dir, 'critic.json'), 'KEEP');
    await runCli([join(root, 'orchestrator.json'), '--approve', 'approve_all', '--workers-dir', dir, '--json']);
    expect(readFileSync(join(dir, 'critic.json'), 'utf8')).toBe('KEEP');
    const strictDir = tempDir();
    await runCli([join(root, 'orchestrator.json'), '--approve', 'strict', '--workers-dir', strictDir, '--json']);
    expect(existsSync(join(strictDir, 'critic.json'))).toBe(false);
  });
});
