/** An A2A agent built with the official SDK, delegated to by a replayed Request through the built `delegate-run` (DEL-31 to DEL-37). */
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { artifactOf, dataPart, publishArtifact, publishStatus, startA2aAgent, type TestAgent } from '../helpers/a2a-agent.js';
import { exited, folderWith, readTrace, runCli, startCli, waitFor } from '../helpers/cli.js';

const agents: TestAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

/** A forecaster Request whose tool delegates to `reference`, and the cassette that plays its model: one call, then `done`. */
function forecaster(reference: string) {
  return folderWith({
    'forecaster.json': {
      meta: { name: 'forecaster' },
      context: [{ type: 'tool', tool: { forecast: { properties: { city: { type: 'string' } }, _delegate: reference } } }],
      schema: { type: 'string' },
    },
    'forecaster.cassette.json': {
      version: 1,
      entries: [
        {
          match: { request: 'forecaster', step: 0 },
          solution: { calls: [{ _tool: 'forecast', city: 'Lyon', _outputPath: '†state.weather' }], output: null },
          usage: { inputTokens: 10, outputTokens: 5 },
        },
        { match: { request: 'forecaster', step: 1, contains: 'SUNNY' }, solution: { calls: [], output: 'done' }, usage: { inputTokens: 10, outputTokens: 5 } },
      ],
    },
  });
}

describe('delegate-run and an A2A agent', () => {
  it('runs a replayed Request whose tool delegates to the agent, and reports the agent as a remote run of its cost tree', async () => {
    const agent = await startA2aAgent({
      behaviour: async (context, bus) => {
        publishArtifact(context, bus, artifactOf('forecast', dataPart({ sky: 'SUNNY' })));
        publishStatus(context, bus, TaskState.TASK_STATE_COMPLETED, undefined, { usage: { inputTokens: 300, outputTokens: 30, costUsd: 0.25 } });
      },
    });
    agents.push(agent);
    const root = forecaster(`a2a+${agent.base}`);
    const trace = join(root, 'trace.jsonl');
    const run = await runCli([join(root, 'forecaster.json'), '--allow-host', '127.0.0.1', '--json', '--trace', trace]);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { ok: boolean; output: unknown; usage: { inputTokens: number; costUsd: number | null } };
    expect(result).toMatchObject({ ok: true, output: 'done' });
    expect(result.usage.inputTokens).toBe(320);
    expect(agent.messages[0]?.parts[0]?.content).toEqual({ $case: 'data', value: { city: 'Lyon' } });
    expect(readTrace(trace).find((event) => event.event === 'delegate.completed')).toMatchObject({ usage: { inputTokens: 300, remote: true } });
    const report = await runCli(['report', trace, '--json']);
    expect(report.code, report.stderr).toBe(0);
    const { total, rows } = JSON.parse(report.stdout) as {
      total: { inputTokens: number; costUsd: number | null };
      rows: { name: string; costUsd: number | null }[];
    };
    expect(total.inputTokens).toBe(result.usage.inputTokens);
    expect(rows.find((row) => row.name === 'test agent')?.costUsd).toBe(0.25);
  });

  it('cancels the agent task on SIGINT and exits 130 with a complete trace', async () => {
    let working = false;
    const agent = await startA2aAgent({
      behaviour: (_context, _bus, signal) =>
        new Promise<void>((resolve) => {
          working = true;
          signal.addEventListener('abort', () => resolve(), { once: true });
        }),
    });
    agents.push(agent);
    const root = forecaster(`a2a+${agent.base}`);
    const trace = join(root, 'trace.jsonl');
    const { child, done } = startCli([join(root, 'forecaster.json'), '--allow-host', '127.0.0.1', '--json', '--trace', trace]);
    await waitFor(() => working, 15_000);
    child.kill('SIGINT');
    const ended = await exited(done, 'delegate-run interrupted during an A2A call', 15_000);
    expect(ended.code).toBe(130);
    expect(agent.canceled).toHaveLength(1);
    const events = readTrace(trace);
    expect(events.find((event) => event.event === 'delegate.failed')).toMatchObject({ code: 'cancelled_by_user' });
    expect(events.at(-1)).toMatchObject({ event: 'run.failed', code: 'cancelled_by_user' });
  });
});
