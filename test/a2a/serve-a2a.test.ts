/** `delegate-serve --a2a` end to end (A2A-1 to A2A-11): a real socket on 127.0.0.1, replayed Requests, and the official A2A SDK's client on the other side. */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AgentCard, type Message, type Part, Role, type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHEMAS_EXTENSION } from '../../src/a2a/served-card.js';
import { main } from '../../src/cli/serve.js';
import { activityLog, writeIn, writeWaiterAndDeployer } from '../helpers/served-agents.js';
import { exited, offlineEnv, SERVE_BIN, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { rawRequest } from '../server/raw-request.js';

const BRIEF = { brief: 'a sad ballad', ambience: 'rain on a window' };
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/**
 * A served folder: requests/music (the producer replays its cassette), a Request whose tool waits
 * until cancelled, one whose tool needs approval, and one whose cassette matches nothing.
 */
function servedFolder(): string {
  const root = tempDir();
  cpSync('requests/music', join(root, 'music'), { recursive: true });
  writeWaiterAndDeployer(root);
  writeIn(root, 'broken.json', { meta: { name: 'broken' }, context: [{ type: 'system', text: 'Fail.' }], schema: { type: 'string' } });
  writeIn(root, 'broken.cassette.json', { version: 1, entries: [{ match: { request: 'someone-else' }, solution: { calls: [], output: 'x' } }] });
  writeIn(root, '.hidden.json', { context: [{ type: 'system', text: 'HIDDEN' }], schema: { type: 'string' } });
  return root;
}

/** Starts `delegate-serve <root> --a2a --port 0 --activities <root>/activities.mjs ...more` in this process; resolves with its origin and what it logged. */
async function startServer(root: string, more: string[] = []): Promise<{ origin: string; stderr: () => string }> {
  const controller = new AbortController();
  let stderr = '';
  let origin = '';
  const done = main([root, '--a2a', '--port', '0', '--activities', join(root, 'activities.mjs'), ...more], {
    stdout: { write: () => true },
    stderr: { write: (text: string) => (stderr += text) },
    env: offlineEnv(),
    signal: controller.signal,
    onListening: (server) => {
      origin = server.url;
    },
  });
  stops.push(async () => {
    controller.abort();
    await done;
  });
  await Promise.race([waitFor(() => origin !== '', 25_000), done.then((code) => Promise.reject(new Error(`delegate-serve exited ${code}: ${stderr}`)))]);
  return { origin, stderr: () => stderr };
}

/** The SDK's client of the agent at `/a2a/<path>`, from its card (the base URL ends with `/` so the card path resolves below it). */
async function clientOf(origin: string, path: string): Promise<Client> {
  return new ClientFactory().createFromUrl(`${origin}/a2a/${path}/`);
}

/** A user message with `parts`, in the task `taskId` when given. */
function userMessage(parts: Part[], taskId = ''): Message {
  return { messageId: crypto.randomUUID(), contextId: '', taskId, role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** A data part. */
function data(value: unknown): Part {
  return { content: { $case: 'data', value }, mediaType: 'application/json', filename: '', metadata: undefined };
}

/** A text part. */
function text(value: string): Part {
  return { content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

/** Sends one message and expects a task back. */
async function send(client: Client, parts: Part[], taskId = ''): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message: userMessage(parts, taskId), configuration: undefined, metadata: undefined });
  if (!('status' in result)) throw new Error(`Expected a task, got ${JSON.stringify(result)}`);
  return result as Task;
}

/** The value of the first data part among `parts`. */
function dataOf(parts: Part[] | undefined): unknown {
  const part = parts?.find((candidate) => candidate.content?.$case === 'data');
  return part?.content?.$case === 'data' ? part.content.value : undefined;
}

/** The producer's recorded output, read from its cassette's last answer. */
function producerOutput(): unknown {
  const cassette = JSON.parse(readFileSync('requests/music/producer.cassette.json', 'utf8')) as {
    entries: { match: { request: string }; solution: { output: unknown } }[];
  };
  return cassette.entries.filter((entry) => entry.match.request === 'producer').at(-1)?.solution.output;
}

describe('delegate-serve --a2a (A2A-1 to A2A-11)', () => {
  it('gives each valid Request a card at <base>/.well-known/agent-card.json and lists every card at /a2a/ (A2A-1, A2A-2)', async () => {
    const root = servedFolder();
    const { origin } = await startServer(root);
    const client = await clientOf(origin, 'music/producer');
    const card = await client.getAgentCard();
    const document = JSON.parse(readFileSync('requests/music/producer.json', 'utf8'));
    expect(card.name).toBe('producer');
    expect(card.description).toBe(document.meta.description);
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${origin}/a2a/music/producer`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.skills.map((skill) => skill.id)).toEqual(['producer']);
    expect(card.defaultOutputModes).toEqual(['application/json']);
    const schemas = card.capabilities?.extensions.find((extension) => extension.uri === SCHEMAS_EXTENSION);
    expect(schemas?.params).toEqual({ inputSchema: document.context[1].schema, outputSchema: document.schema });

    const listed = (await (await fetch(`${origin}/a2a/`)).json()) as AgentCard[];
    const urls = listed.map((listedCard) => listedCard.supportedInterfaces[0]?.url);
    expect(urls).toEqual(['broken', 'deployer', 'music/composer', 'music/producer', 'music/sound-designer', 'waiter'].map((path) => `${origin}/a2a/${path}`));
    // Every listed card is the one its agent answers with.
    for (const listedCard of listed) {
      const base = listedCard.supportedInterfaces[0]?.url as string;
      expect(await (await fetch(`${base}/.well-known/agent-card.json`)).json()).toEqual(listedCard);
    }
  });

  it('follows the files: an edited Request changes its card at once, a new one is an agent, a deleted one is gone (A2A-2, A2A-3)', async () => {
    const root = servedFolder();
    const { origin } = await startServer(root);
    const cardOf = async (path: string) => {
      const response = await fetch(`${origin}/a2a/${path}/.well-known/agent-card.json`);
      return response.status === 200 ? ((await response.json()) as AgentCard) : response.status;
    };
    expect(await cardOf('fresh')).toBe(404);
    const document = { meta: { name: 'fresh', description: 'First.' }, context: [{ type: 'system', text: 'Hi.' }], schema: { type: 'string' } };
    writeFileSync(join(root, 'fresh.json'), JSON.stringify(document));
    expect(await cardOf('fresh')).toMatchObject({ description: 'First.' });
    writeFileSync(join(root, 'fresh.json'), JSON.stringify({ ...document, meta: { name: 'fresh', description: 'Second, and longer.' } }));
    expect(await cardOf('fresh')).toMatchObject({ description: 'Second, and longer.' });
    rmSync(join(root, 'fresh.json'));
    expect(await cardOf('fresh')).toBe(404);
  });

  it('serves nothing outside the folder, hidden or not a valid Request, and takes JSON-RPC by POST only (A2A-1)', async () => {
    const root = servedFolder();
    writeFileSync(join(root, '..', 'outside.json'), JSON.stringify({ context: [{ type: 'system', text: 'OUT' }], schema: { type: 'string' } }));
    const { origin } = await startServer(root);
    const port = Number(new URL(origin).port);
    for (const path of [
      '/a2a/../outside',
      '/a2a/%2e%2e/outside',
      '/a2a/music/%2e%2e/%2e%2e/outside',
      '/a2a/.hidden',
      '/a2a/music/producer.cassette',
      '/a2a/nothing',
      '/a2a/music',
    ]) {
      // Sent as written, not as a client would normalize it (SERVE-7).
      expect((await rawRequest(port, `${path}/.well-known/agent-card.json`)).status, path).toBe(404);
      expect((await rawRequest(port, path, 'POST')).status, path).toBe(404);
    }
    expect((await fetch(`${origin}/a2a/music/producer`)).status).toBe(405);
    // The documents are still served beside the agents.
    expect((await fetch(`${origin}/music/producer.json`)).status).toBe(200);
  });

  it('message/send runs the Request with a data part and returns its output as a data part (A2A-4, A2A-6)', async () => {
    const { origin } = await startServer(servedFolder());
    const client = await clientOf(origin, 'music/producer');
    const task = await send(client, [data(BRIEF)]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(dataOf(task.artifacts[0]?.parts)).toEqual(producerOutput());
  });

  it('message/send takes the input as JSON text too (A2A-4)', async () => {
    const { origin } = await startServer(servedFolder());
    const client = await clientOf(origin, 'music/producer');
    const task = await send(client, [text(JSON.stringify(BRIEF))]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(dataOf(task.artifacts[0]?.parts)).toEqual(producerOutput());
  });

  it('input its schema refuses fails the task before anything runs, every pointer named as delegate-run names them (A2A-5)', async () => {
    const root = servedFolder();
    const { origin } = await startServer(root);
    const client = await clientOf(origin, 'music/producer');
    const task = await send(client, [data({ brief: 3 })]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    const error = (dataOf(task.status?.message?.parts) as { error: { code: string; issues: unknown } }).error;
    expect(error.code).toBe('invalid_input');
    expect(error.issues).toEqual([{ pointer: '/brief', message: 'Expected string.' }]);
    const said = task.status?.message?.parts.find((part) => part.content?.$case === 'text');
    expect(said?.content?.$case === 'text' && said.content.value).toMatch(/^invalid_input: .*\n {2}\/brief: Expected string\./s);
    // The document is named by its path on the server, never by its place on the server's disk (SERVE-3).
    expect(error).toMatchObject({ location: '/music/producer.json' });
    expect(JSON.stringify(task.status)).not.toContain(root);
    expect(task.artifacts).toEqual([]);
  });

  it('a failing Request fails its task with the typed code (A2A-6)', async () => {
    const { origin } = await startServer(servedFolder());
    const task = await send(await clientOf(origin, 'broken'), [text('go')]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(dataOf(task.status?.message?.parts)).toMatchObject({ error: { code: 'model_error' } });
  });

  it('message/stream streams the task, working updates from the trace events, the output and the final state (A2A-3, A2A-7)', async () => {
    const { origin } = await startServer(servedFolder());
    const client = await clientOf(origin, 'music/producer');
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({ tenant: '', message: userMessage([data(BRIEF)]), configuration: undefined, metadata: undefined }))
      events.push(event);
    const kinds = events.map((event) => event.payload?.$case);
    expect(kinds[0]).toBe('task');
    const updates = events.flatMap((event) => (event.payload?.$case === 'statusUpdate' ? [event.payload.value] : []));
    const said = updates
      .flatMap((update) => update.status?.message?.parts ?? [])
      .flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
    // The same words MCP's progress says, as the run goes (A2A-7).
    expect(said).toEqual(expect.arrayContaining(['producer delegated to composer', 'producer: step 1 answered']));
    expect(updates.filter((update) => update.metadata?.['delegate-run/event'] === 'delegate.started').length).toBeGreaterThan(0);
    expect(updates.at(-1)?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const artifact = events.find((event) => event.payload?.$case === 'artifactUpdate');
    expect(artifact?.payload?.$case === 'artifactUpdate' && dataOf(artifact.payload.value.artifact?.parts)).toEqual(producerOutput());
    // Every event belongs to the one task.
    const task = events[0]?.payload?.$case === 'task' ? events[0].payload.value : undefined;
    expect(updates.every((update) => update.taskId === task?.id)).toBe(true);
  });

  it('tasks/cancel aborts the run tree: its waiting Activity sees the signal, the task ends canceled, the trace is complete (A2A-9)', async () => {
    const root = servedFolder();
    const trace = join(root, 'trace.jsonl');
    const { origin } = await startServer(root, ['--trace', trace]);
    const client = await clientOf(origin, 'waiter');
    // Not blocking: the task comes back while its run waits.
    const started = await client.sendMessage({
      tenant: '',
      message: userMessage([text('go')]),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true },
      metadata: undefined,
    });
    const taskId = (started as Task).id;
    await waitFor(() => activityLog(root).includes('waiting'), 25_000);
    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(dataOf(canceled.status?.message?.parts)).toMatchObject({ error: { code: 'cancelled_by_user' } });
    expect(activityLog(root)).toContain('cancelled');
    expect((await client.getTask({ tenant: '', id: taskId, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // The trace ends with the run's failure as cancelled, once the sink has written it.
    const ended = () =>
      readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { event: string; code?: string })
        .find((event) => event.event === 'run.failed');
    await waitFor(() => ended() !== undefined, 25_000);
    expect(ended()?.code).toBe('cancelled_by_user');
    // A finished task cannot be cancelled again, nor take another message.
    await expect(
      client.sendMessage({ tenant: '', message: userMessage([text('again')], taskId), configuration: undefined, metadata: undefined }),
    ).rejects.toThrow(/terminal/);
  });

  it('a streaming client sees its cancelled task end canceled (A2A-3, A2A-9)', async () => {
    const root = servedFolder();
    const { origin } = await startServer(root);
    const client = await clientOf(origin, 'waiter');
    const states: TaskState[] = [];
    let taskId = '';
    const stream = (async () => {
      for await (const event of client.sendMessageStream({ tenant: '', message: userMessage([text('go')]), configuration: undefined, metadata: undefined })) {
        if (event.payload?.$case === 'task') taskId = event.payload.value.id;
        if (event.payload?.$case === 'statusUpdate') states.push(event.payload.value.status?.state as TaskState);
      }
    })();
    await waitFor(() => taskId !== '' && activityLog(root).includes('waiting'), 25_000);
    await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    await stream;
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('an approval becomes input-required with the question as a data part; the answer in the same task resumes the run (A2A-8)', async () => {
    const root = servedFolder();
    const { origin } = await startServer(root);
    const client = await clientOf(origin, 'deployer');
    const asked = await send(client, [text('deploy')]);
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const question = dataOf(asked.status?.message?.parts) as { approval: { callId: string; tool: string; parameters: unknown; run: unknown } };
    expect(question.approval).toMatchObject({ tool: 'deploy', parameters: { target: 'production' }, run: { name: 'deployer', depth: 0 } });
    expect(activityLog(root)).toBe('');
    // Not an answer: asked again, saying why, and nothing ran.
    const again = await send(client, [text('perhaps')], asked.id);
    expect(again.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const said = again.status?.message?.parts.find((part) => part.content?.$case === 'text');
    expect(said?.content?.$case === 'text' && said.content.value).toMatch(/^The answer "perhaps" is not one an approval takes\. Approval needed: deploy/);
    const done = await send(client, [data({ decision: 'edited', parameters: { target: 'staging' } })], asked.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.id).toBe(asked.id);
    expect(dataOf(done.artifacts[0]?.parts)).toBe('deployed');
    expect(activityLog(root)).toBe('deployed staging\n');
  });

  it('a rejected approval is told to the model and the Activity never runs; streaming shows input-required too (A2A-8)', async () => {
    const root = servedFolder();
    const { origin } = await startServer(root);
    const client = await clientOf(origin, 'deployer');
    const states: TaskState[] = [];
    let taskId = '';
    for await (const event of client.sendMessageStream({ tenant: '', message: userMessage([text('deploy')]), configuration: undefined, metadata: undefined })) {
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (event.payload?.$case === 'statusUpdate') states.push(event.payload.value.status?.state as TaskState);
    }
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = await send(client, [data({ decision: 'rejected', reason: 'not today' })], taskId);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(activityLog(root)).toBe('');
  });

  it('--approve approve_all answers approvals on the server: no input-required (A2A-8, A2A-11)', async () => {
    const root = servedFolder();
    const { origin } = await startServer(root, ['--approve', 'approve_all']);
    const done = await send(await clientOf(origin, 'deployer'), [text('deploy')]);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(activityLog(root)).toBe('deployed production\n');
  });

  it('cancelling a task whose approval waits ends it canceled without running the call (A2A-8, A2A-9)', async () => {
    const root = servedFolder();
    const { origin } = await startServer(root);
    const client = await clientOf(origin, 'deployer');
    const asked = await send(client, [text('deploy')]);
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const canceled = await client.cancelTask({ tenant: '', id: asked.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(activityLog(root)).toBe('');
  });

  it('the built binary stopped by SIGTERM cancels the tasks still running and exits 0 (A2A-9, CLI-14)', async () => {
    const root = servedFolder();
    const server = startCli([root, '--a2a', '--port', '0', '--activities', join(root, 'activities.mjs')], { bin: SERVE_BIN });
    let origin = '';
    server.child.stderr?.on('data', (chunk: Buffer) => {
      origin ||= /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(chunk.toString())?.[1] ?? '';
    });
    await waitFor(() => origin !== '', 25_000);
    const client = await clientOf(origin, 'waiter');
    const configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true };
    await client.sendMessage({ tenant: '', message: userMessage([text('go')]), configuration, metadata: undefined });
    await waitFor(() => activityLog(root).includes('waiting'), 25_000);
    server.child.kill('SIGTERM');
    const result = await exited(server.done, 'delegate-serve --a2a after SIGTERM', 25_000);
    expect(result.code).toBe(0);
    expect(activityLog(root)).toContain('cancelled');
  });

  it('stopping the server withdraws a question waiting for its client: the run ends cancelled, its trace complete, nothing deployed (A2A-8, A2A-9)', async () => {
    const root = servedFolder();
    const trace = join(root, 'trace.jsonl');
    const controller = new AbortController();
    let origin = '';
    const done = main([root, '--a2a', '--port', '0', '--activities', join(root, 'activities.mjs'), '--trace', trace], {
      stdout: { write: () => true },
      stderr: { write: () => true },
      env: offlineEnv(),
      signal: controller.signal,
      onListening: (server) => {
        origin = server.url;
      },
    });
    await waitFor(() => origin !== '', 25_000);
    const asked = await send(await clientOf(origin, 'deployer'), [text('deploy')]);
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    controller.abort();
    const hang = new Promise<never>((_resolve, reject) =>
      setTimeout(() => reject(new Error('delegate-serve --a2a had not stopped after 15 s')), 15_000).unref(),
    );
    expect(await Promise.race([done, hang])).toBe(0);
    const events = readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; error?: { code: string } });
    expect(events.at(-1)).toMatchObject({ event: 'run.failed', error: { code: 'cancelled_by_user' } });
    expect(activityLog(root)).toBe('');
  });

  it("--a2a takes delegate-run's run options and refuses those a server cannot honour; without --a2a a run option is bad usage (A2A-11)", async () => {
    const root = servedFolder();
    const usage = async (argv: string[]) => {
      let stderr = '';
      const code = await main(argv, { stdout: { write: () => true }, stderr: { write: (said: string) => (stderr += said) }, env: offlineEnv() });
      return { code, stderr };
    };
    for (const [argv, said] of [
      [[root, '--a2a', '--input', '{}'], '--input is not an option of delegate-serve --a2a'],
      [[root, '--a2a', '--journal', 'j.jsonl'], '--journal is not an option of delegate-serve --a2a'],
      [[root, '--a2a', '--approve', 'interactive'], '--approve interactive needs a terminal'],
      [[root, '--a2a', '--max-steps', '0'], '--max-steps'],
      [[root, '--model', 'replay:x.json'], 'model'],
    ] as const) {
      const { code, stderr } = await usage([...argv]);
      expect(code, argv.join(' ')).toBe(2);
      expect(stderr, argv.join(' ')).toContain(said);
    }
    expect((await usage(['--a2a', '--help'])).code).toBe(0);
  });

  it('answers a 0.3 client through the SDK compatibility layer, from the same card (A2A-10)', async () => {
    const { origin } = await startServer(servedFolder());
    // A 0.3 client sends no A2A-Version header and reads the card's top-level url.
    const raw = (await (await fetch(`${origin}/a2a/music/producer/.well-known/agent-card.json`)).json()) as {
      url: string;
      protocolVersion: string;
      preferredTransport: string;
    };
    expect(raw).toMatchObject({ url: `${origin}/a2a/music/producer`, protocolVersion: '0.3', preferredTransport: 'JSONRPC' });
    const client = new Client(new LegacyJsonRpcTransport({ endpoint: raw.url }), raw as unknown as AgentCard);
    expect(client.protocolVersion).toBe('0.3');
    const task = await send(client, [data(BRIEF)]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(dataOf(task.artifacts[0]?.parts)).toEqual(producerOutput());
  });
});
