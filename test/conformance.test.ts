/** Runs the language-neutral conformance suite (spec/conformance) through the built binary and expects every case to pass. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const RUNNER = fileURLToPath(new URL('../spec/conformance/run.mjs', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('..', import.meta.url));

/** Runs the runner to completion; resolves with its exit status and output. */
function runSuite(): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER], { cwd: REPOSITORY, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('the conformance suite', () => {
  it('passes every case through the built delegate-run binary', { timeout: 15 * 60_000 }, async () => {
    const { status, stdout, stderr } = await runSuite();
    const lines = stdout.trim().split('\n');
    const failures = lines.filter((line) => line.startsWith('FAIL '));
    expect(failures, stderr).toEqual([]);
    expect(lines.at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    expect(status).toBe(0);
  });
});
