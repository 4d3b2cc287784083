/** The A2A round trip of requests/a2a: a Request delegates to an agent that is itself a served Request, `delegate-serve --a2a` a real child process on another loopback port (DEL-31 to DEL-37, A2A-1 to A2A-9). */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AgentCard, type Message, type Part, Role, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityLog, writeWaiterAndDeployer } from '../helpers/served-agents.js';
import { exited, offlineEnv, readTrace, runCli, SERVE_BIN, startCli, tempDir, waitFor } from '../helpers/cli.js';

/** The example's caller, as shipped: it names the agent on the documented port. */
const CALLER = JSON.parse(readFileSync('requests/a2a/release-note.json', 'utf8')) as { context: { tool?: { review: { _delegate: string } } }[] };
const DOCUMENTED_AGENT = 'a2a+http://127.0.0.1:4141/a2a/reviewer';
const DRAFT = { text: 'Pinning files is now possible.' };

/**
 * The served folder: requests/a2a/remote as shipped (the reviewer and its cassette), beside it a
 * Request whose tool waits until cancelled and one whose tool needs approval, with their Activities.
 */
function servedFolder(): string {
  const root = tempDir();
  cpSync('requests/a2a/remote', root, { recursive: true });
  writeWaiterAndDeployer(root);
  return root;
}

let served = '';
let origin = '';
let server: ChildProcess | undefined;
let serverSaid = '';

beforeAll(async () => {
  served = servedFolder();
  // A real `delegate-serve --a2a` process on an ephemeral loopback port; its agents replay the cassettes beside them.
  server = spawn(
    process.execPath,
    [SERVE_BIN, served, '--a2a', '--port', '0', '--activities', join(served, 'activities.mjs'), '--trace', join(served, 'served.jsonl')],
    {
      env: offlineEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const child = server;
  origin = await new Promise<string>((found, failed) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      serverSaid += chunk.toString();
      const match = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(serverSaid);
      if (match?.[1]) found(match[1]);
    });
    child.once('exit', (code) => failed(new Error(`delegate-serve --a2a exited ${code}: ${serverSaid}`)));
  });
}, 30_000);

afterAll(async () => {
  if (server?.exitCode !== null || server.signalCode !== null) return;
  const gone = new Promise((resolve) => server?.once('exit', resolve));
  server.kill('SIGTERM');
  await gone;
});

/** A copy of the example's caller (and its cassette) in a folder of its own, its agent at `agent` on the test's server. */
function caller(agent: string, cassette?: unknown): string {
  const folder = tempDir();
  const document = structuredClone(CALLER);
  const review = document.context.find((message) => message.tool !== undefined)?.tool?.review;
  if (review === undefined) throw new Error('requests/a2a/release-note.json has no review tool');
  review._delegate = `a2a+${origin}/a2a/${agent}`;
  writeFileSync(join(folder, 'release-note.json'), JSON.stringify(document));
  writeFileSync(
    join(folder, 'release-note.cassette.json'),
    cassette === undefined ? readFileSync('requests/a2a/release-note.cassette.json') : JSON.stringify(cassette),
  );
  return join(folder, 'release-note.json');
}

/** The server's trace: the events of every task's run. */
function servedTrace() {
  return readTrace(join(served, 'served.jsonl'));
}

/** Whether the server's trace (written in batches) has shown the end `event` (with `code`, when given) of the latest run of the Request `name`. */
function servedRunEnded(name: string, event: 'run.completed' | 'run.failed', code?: string): boolean {
  const events = servedTrace();
  const run = events.findLast((started) => started.event === 'run.started' && started.name === name)?.run;
  return events.some((ended) => ended.event === event && ended.run === run && (code === undefined || ended.code === code));
}

/** A user message holding `parts`, in the task `taskId` when given. */
function userMessage(parts: Part[], taskId = ''): Message {
  return { messageId: crypto.randomUUID(), contextId: '', taskId, role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** A data part. */
function data(value: unknown): Part {
  return { content: { $case: 'data', value }, mediaType: 'application/json', filename: '', metadata: undefined };
}

/** Sends one message with the SDK's client and expects a task back. */
async function send(client: Client, parts: Part[], taskId = ''): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message: userMessage(parts, taskId), configuration: undefined, metadata: undefined });
  if (!('status' in result)) throw new Error(`Expected a task, got ${JSON.stringify(result)}`);
  return result as Task;
}

describe('the A2A round trip of requests/a2a', () => {
  it('ships a caller whose delegate is the reviewer of requests/a2a/remote on the documented port', () => {
    expect(CALLER.context.find((message) => message.tool !== undefined)?.tool?.review._delegate).toBe(DOCUMENTED_AGENT);
  });

  it("runs the caller through the built CLI: its output is the remote agent's, the delegation is remote with the agent's usage, and the agent ran on the server", async () => {
    const request = caller('reviewer');
    const trace = join(request, '..', 'trace.jsonl');
    const run = await runCli([request, '--allow-host', '127.0.0.1', '--input', JSON.stringify(DRAFT), '--json', '--trace', trace]);
    expect(run.code, run.stderr).toBe(0);
    const reviewer = JSON.parse(readFileSync('requests/a2a/remote/reviewer.cassette.json', 'utf8')).entries[0];
    const result = JSON.parse(run.stdout) as { ok: boolean; output: { note: string }; usage: { inputTokens: number; runs: number } };
    // The caller's last step matches only a prompt holding the reviewer's suggestion: the note is the remote agent's.
    expect(result).toMatchObject({ ok: true, output: { note: reviewer.solution.output.suggestion } });
    const events = readTrace(trace);
    expect(events.find((event) => event.event === 'delegate.started')).toMatchObject({
      delegate: `${origin}/a2a/reviewer`,
      name: 'reviewer',
      model: `a2a:${origin}/a2a/reviewer`,
    });
    expect(events.find((event) => event.event === 'delegate.completed')).toMatchObject({ usage: { ...reviewer.usage, remote: true } });
    // No run of the reviewer in the caller's trace (DEL-37): it ran on the server, whose trace has it, with the draft as input.
    expect(events.filter((event) => event.event === 'run.started').map((event) => event.name)).toEqual(['release-note']);
    const callerUsage = JSON.parse(readFileSync('requests/a2a/release-note.cassette.json', 'utf8')).entries.reduce(
      (sum: number, entry: { usage: { inputTokens: number } }) => sum + entry.usage.inputTokens,
      0,
    );
    expect(result.usage.inputTokens).toBe(callerUsage + reviewer.usage.inputTokens);
    await waitFor(() => servedRunEnded('reviewer', 'run.completed'), 15_000);
    expect(servedTrace().find((event) => event.event === 'run.started' && event.name === 'reviewer')).toMatchObject({ input: { note: DRAFT.text } });
  });

  it("lists every served Request with the SDK's client, and calls each", async () => {
    const cards = (await (await fetch(`${origin}/a2a/`)).json()) as AgentCard[];
    expect(cards.map((card) => card.name)).toEqual(['deployer', 'reviewer', 'waiter']);
    const inputs: Record<string, unknown> = { reviewer: { note: DRAFT.text }, deployer: {}, waiter: {} };
    for (const card of cards) {
      const client = await new ClientFactory().createFromUrl(`${card.supportedInterfaces[0]?.url}/`);
      expect(await client.getAgentCard()).toEqual(card);
      // Not blocking: the task comes back while its run goes on (the waiter's until cancelled).
      const configuration = {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        historyLength: undefined,
        returnImmediately: card.name === 'waiter',
      };
      const started = await client.sendMessage({ tenant: '', message: userMessage([data(inputs[card.name])]), configuration, metadata: undefined });
      const task = started as Task;
      if (card.name === 'reviewer') {
        expect(task.status?.state, JSON.stringify(task.status)).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(task.artifacts[0]?.parts[0]?.content).toMatchObject({ $case: 'data', value: { approved: false } });
      } else {
        if (card.name === 'deployer') expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
        const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
        expect(canceled.status?.state, card.name).toBe(TaskState.TASK_STATE_CANCELED);
      }
    }
  }, 30_000);

  it('cancels across the boundary: SIGINT to the caller while the agent works ends the remote task canceled', async () => {
    const request = caller('waiter', {
      version: 1,
      entries: [{ match: { request: 'release-note', step: 0 }, solution: { calls: [{ _tool: 'review', note: 'Wait for me.' }], output: null } }],
    });
    const trace = join(request, '..', 'trace.jsonl');
    const waited = activityLog(served).split('waiting').length;
    const cancelled = activityLog(served).split('cancelled').length;
    const { child, done } = startCli([request, '--allow-host', '127.0.0.1', '--input', JSON.stringify(DRAFT), '--json', '--trace', trace]);
    await waitFor(() => activityLog(served).split('waiting').length > waited, 15_000);
    child.kill('SIGINT');
    const ended = await exited(done, 'the caller interrupted while the agent works', 15_000);
    expect(ended.code).toBe(130);
    expect(readTrace(trace).at(-1)).toMatchObject({ event: 'run.failed', code: 'cancelled_by_user' });
    // The remote run saw its signal and ended cancelled, its trace complete on the server.
    await waitFor(() => activityLog(served).split('cancelled').length > cancelled, 15_000);
    await waitFor(() => servedRunEnded('waiter', 'run.failed', 'cancelled_by_user'), 15_000);
  }, 30_000);

  it("an approval across the boundary: the caller's model sees the agent's question, and the SDK's client answers it", async () => {
    const request = caller('deployer', {
      version: 1,
      entries: [
        { match: { request: 'release-note', step: 0 }, solution: { calls: [{ _tool: 'review', note: 'Ship it.' }], output: null } },
        // Matched only when the failed call's message holds the agent's question (DEL-36).
        {
          match: { request: 'release-note', step: 1, contains: 'Approval needed: deploy' },
          solution: { calls: [], output: { note: 'The reviewer asks for approval.' } },
        },
      ],
    });
    const trace = join(request, '..', 'trace.jsonl');
    const run = await runCli([request, '--allow-host', '127.0.0.1', '--input', JSON.stringify(DRAFT), '--json', '--trace', trace]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, output: { note: 'The reviewer asks for approval.' } });
    expect(readTrace(trace).find((event) => event.event === 'delegate.failed')).toMatchObject({ code: 'worker_error' });
    expect(activityLog(served)).not.toContain('deployed');
    // The task left waiting for an answer is cancelled at the agent (DEL-36), its run ended on the server.
    await waitFor(() => servedRunEnded('deployer', 'run.failed', 'cancelled_by_user'), 15_000);

    // A client that can answer does: the same agent's question, answered in its task, resumes the run on the server (A2A-8).
    const client = await new ClientFactory().createFromUrl(`${origin}/a2a/deployer/`);
    const asked = await send(client, [data({})]);
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const answered = await send(client, [data({ decision: 'approved' })], asked.id);
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(activityLog(served)).toContain('deployed production');
  }, 30_000);
});
