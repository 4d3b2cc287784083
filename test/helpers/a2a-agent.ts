// An A2A agent built with the official SDK (DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler) on node:http at 127.0.0.1:0.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Artifact, type Message, type Part, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  type RequestContext,
  ServerCallContext,
} from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';

/** A running test agent: its base URL, what it was sent, and how to stop it. */
export interface TestAgent {
  /** The agent's base URL, `http://127.0.0.1:<port><path>`. */
  base: string;
  /** Its card's URL. */
  card: string;
  /** The JSON-RPC bodies it received, parsed. */
  requests: { method: string; params: Record<string, unknown> }[];
  /** The messages its executor was given. */
  messages: Message[];
  /** The ids of the tasks it was asked to cancel. */
  canceled: string[];
  close(): Promise<void>;
}

/** What the test's executor does with one message: publish events on the bus (the helper publishes the task first). */
export type AgentBehaviour = (context: RequestContext, bus: ExecutionEventBus, signal: AbortSignal) => Promise<void>;

/** Options of {@link startA2aAgent}. */
export interface TestAgentOptions {
  behaviour: AgentBehaviour;
  /** The path of the agent below the origin (default `/a2a/agent`). */
  path?: string;
  streaming?: boolean;
  /** Fields of its first skill besides the standard ones (`inputSchema`, `outputSchema`). */
  skill?: Record<string, unknown>;
  /** Speak A2A 0.3 (its card and JSON-RPC methods) through the SDK's compatibility layer instead of 1.0. */
  legacy?: boolean;
}

/** A data part, as the SDK's types spell it. */
export function dataPart(value: unknown): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

/** A text part. */
export function textPart(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** An artifact of one part. */
export function artifactOf(id: string, part: Part): Artifact {
  return { artifactId: id, name: id, description: '', parts: [part], metadata: undefined, extensions: [] };
}

/** Publishes the task's new status (with a text message and metadata, when given). */
export function publishStatus(context: RequestContext, bus: ExecutionEventBus, state: TaskState, text?: string, metadata?: Record<string, unknown>): void {
  const message: Message | undefined =
    text === undefined
      ? undefined
      : {
          messageId: `${context.taskId}-status`,
          contextId: context.contextId,
          taskId: context.taskId,
          role: 2,
          parts: [textPart(text)],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        };
  bus.publish(
    AgentEvent.statusUpdate({
      taskId: context.taskId,
      contextId: context.contextId,
      status: { state, message, timestamp: new Date().toISOString() },
      metadata,
    }),
  );
}

/** Publishes an artifact update. */
export function publishArtifact(context: RequestContext, bus: ExecutionEventBus, artifact: Artifact, append = false): void {
  bus.publish(AgentEvent.artifactUpdate({ taskId: context.taskId, contextId: context.contextId, artifact, append, lastChunk: !append, metadata: undefined }));
}

/** Starts an SDK-built agent whose executor publishes the task, then runs `behaviour` until it settles or the task is canceled. */
export async function startA2aAgent(options: TestAgentOptions): Promise<TestAgent> {
  const path = options.path ?? '/a2a/agent';
  const requests: TestAgent['requests'] = [];
  const messages: Message[] = [];
  const canceled: string[] = [];
  const running = new Map<string, AbortController>();
  const executor: AgentExecutor = {
    async execute(context, bus) {
      messages.push(context.userMessage);
      bus.publish(
        AgentEvent.task({
          id: context.taskId,
          contextId: context.contextId,
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
          artifacts: [],
          history: [context.userMessage],
          metadata: undefined,
        }),
      );
      const controller = new AbortController();
      running.set(context.taskId, controller);
      try {
        await options.behaviour(context, bus, controller.signal);
      } finally {
        running.delete(context.taskId);
        bus.finished();
      }
    },
    async cancelTask(taskId, bus) {
      canceled.push(taskId);
      running.get(taskId)?.abort();
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: '',
          status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
    },
  };
  let base = '';
  const card = () => ({
    name: 'test agent',
    description: 'An agent of the tests.',
    version: '1.0.0',
    supportedInterfaces: [{ url: base, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    capabilities: { streaming: options.streaming ?? false, pushNotifications: false, extensions: [] },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [
      {
        id: 'main',
        name: 'main',
        description: 'Does the work.',
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
        ...options.skill,
      },
    ],
    securitySchemes: {},
    securityRequirements: [],
    signatures: [],
  });
  /** The card as an A2A 0.3 agent publishes it. */
  const legacyCard = () => ({
    protocolVersion: '0.3.0',
    name: 'test agent',
    description: 'An agent of the tests.',
    version: '1.0.0',
    url: base,
    preferredTransport: 'JSONRPC',
    capabilities: { streaming: options.streaming ?? false },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [{ id: 'main', name: 'main', description: 'Does the work.', tags: [], ...options.skill }],
  });
  let handler: JsonRpcTransportHandler | LegacyJsonRpcTransportHandler | undefined;
  const server = createServer((request, response) => {
    void answer(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', base);
    if (request.method === 'GET' && url.pathname === `${path}/.well-known/agent-card.json`) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(options.legacy ? legacyCard() : card()));
      return;
    }
    if (request.method !== 'POST' || url.pathname !== path || !handler) {
      response.writeHead(404).end();
      return;
    }
    let body = '';
    for await (const chunk of request) body += chunk;
    requests.push(JSON.parse(body));
    const result = await handler.handle(body, new ServerCallContext());
    if (typeof (result as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for await (const event of result as AsyncGenerator) response.write(`data: ${JSON.stringify(event)}\n\n`);
      response.end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(result));
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  const requestHandler = new DefaultRequestHandler(card() as never, new InMemoryTaskStore(), executor);
  handler = options.legacy ? new LegacyJsonRpcTransportHandler(requestHandler) : new JsonRpcTransportHandler(requestHandler);
  return {
    base,
    card: `${base}/.well-known/agent-card.json`,
    requests,
    messages,
    canceled,
    close: () =>
      new Promise<void>((resolve) => {
        for (const controller of running.values()) controller.abort();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
