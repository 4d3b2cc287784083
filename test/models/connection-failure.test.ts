/** A model request that reaches no server names the endpoint it tried and why (MODEL-12): both providers, with their real SDKs, against real sockets on 127.0.0.1. */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../src/models/anthropic.js';
import { describeConnectionCause, endpointOf } from '../../src/models/connection-failure.js';
import { OpenAIModel } from '../../src/models/openai.js';
import type { Model, ModelRequest } from '../../src/protocol/model.js';
import { ModelError } from '../../src/protocol/errors.js';
import { solutionSchema } from './support/solution-schema.js';

/** A port on 127.0.0.1 that nothing listens on: bound, then closed. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A TCP server on 127.0.0.1 that answers any bytes with plain HTTP, so a TLS handshake with it fails. */
async function plainServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const providers = [
  {
    name: 'OpenAI',
    path: '/v1/chat/completions',
    model: (baseUrl: string, maxRetries: number): Model =>
      new OpenAIModel({
        model: 'gpt-4.1-mini',
        env: { OPENAI_API_KEY: 'sk-secret-key' },
        baseUrl: `${baseUrl}/v1`,
        retry: { maxRetries, initialDelayMs: 1, maxDelayMs: 5 },
      }),
  },
  {
    name: 'Anthropic',
    path: '/v1/messages',
    model: (baseUrl: string, maxRetries: number): Model =>
      new AnthropicModel({
        model: 'claude-haiku-4-5',
        env: { ANTHROPIC_API_KEY: 'sk-secret-key' },
        baseUrl,
        retry: { maxRetries, initialDelayMs: 1, maxDelayMs: 5 },
      }),
  },
];

function request(): ModelRequest {
  return { requestName: 'composer', step: 0, messages: [{ role: 'user', content: 'A ballad.' }], schema: solutionSchema, config: {} };
}

/** The error `model` fails with. */
async function failureOf(model: Model): Promise<ModelError> {
  const error = await model.generate(request()).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe.each(providers)('$name: a request that reaches no server (MODEL-12)', (provider) => {
  it('names the endpoint, the attempts and "connection refused (ECONNREFUSED)" for a closed port', async () => {
    const port = await refusedPort();
    const error = await failureOf(provider.model(`http://127.0.0.1:${port}`, 3));
    expect(error.message).toBe(
      `The ${provider.name} request to http://127.0.0.1:${port}${provider.path} failed after 4 attempts: connection refused (ECONNREFUSED).`,
    );
    expect(error.data).toMatchObject({ endpoint: `http://127.0.0.1:${port}${provider.path}`, attempts: 4 });
  });

  it('never shows the credentials of the URL or the API key', async () => {
    const port = await refusedPort();
    const error = await failureOf(provider.model(`http://someone:url-password@127.0.0.1:${port}`, 0));
    expect(error.message).toBe(`The ${provider.name} request to http://127.0.0.1:${port}${provider.path} failed: connection refused (ECONNREFUSED).`);
    expect(JSON.stringify(error.data)).not.toMatch(/url-password|sk-secret-key/);
  });

  it('names a TLS failure: https to a server that speaks plain HTTP', async () => {
    const server = await plainServer();
    try {
      const error = await failureOf(provider.model(`https://127.0.0.1:${server.port}`, 0));
      expect(error.message).toMatch(
        new RegExp(`^The ${provider.name} request to https://127\\.0\\.0\\.1:${server.port}${provider.path} failed: TLS failed: [a-z ]+ \\([A-Z_]+\\)\\.$`),
      );
    } finally {
      await server.close();
    }
  });

  // RFC 2606: a .invalid name never resolves, so this asks no server on the internet for an answer
  // it could give; offline the lookup fails at once or after the resolver's own timeout.
  it('names a host name that does not resolve', { timeout: 30_000 }, async () => {
    const error = await failureOf(provider.model('http://delegate-run-test.invalid:8080', 0));
    expect(error.message).toMatch(
      new RegExp(
        `^The ${provider.name} request to http://delegate-run-test\\.invalid:8080${provider.path} failed: the host name (does not resolve \\(ENOTFOUND\\)|could not be resolved .*\\(EAI_AGAIN\\))\\.$`,
      ),
    );
  });
});

describe('endpointOf and describeConnectionCause (MODEL-12)', () => {
  it('keeps scheme, host, port and path, and drops credentials, query and fragment', () => {
    expect(endpointOf('https://user:pass@api.example.com/v1/chat/completions?api-key=secret#part')).toBe('https://api.example.com:443/v1/chat/completions');
    expect(endpointOf('http://[::1]:8080/v1/messages')).toBe('http://[::1]:8080/v1/messages');
  });

  it('says an error code in words, and keeps the message of a code it does not know', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    expect(describeConnectionCause(new TypeError('fetch failed', { cause: refused }))).toBe('connection refused (ECONNREFUSED)');
    expect(describeConnectionCause(Object.assign(new Error('odd'), { code: 'E_ODD' }))).toBe('odd (E_ODD)');
    expect(describeConnectionCause(new Error('Connection error.'))).toBe('Connection error.');
  });
});
