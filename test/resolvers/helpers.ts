/** Test helpers for resolvers: temporary folders, sample documents and a loopback HTTP server that records requests. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { DelegateError, RequestError, type ErrorCode } from '../../src/protocol/errors.js';
import type { ResolveContext, ResolvedRequest, Resolver } from '../../src/resolvers/resolver.js';
import { ResolverRegistry } from '../../src/resolvers/resolver-registry.js';

/** A temporary folder removed by `cleanup`. */
export interface TempDir {
  path: string;
  cleanup(): Promise<void>;
}

/** Creates a fresh folder under the OS temp dir. */
export async function makeTempDir(prefix = 'resolvers-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

/** Writes `value` as pretty JSON (or a string as is), creating parent folders. */
export async function writeDocument(path: string, value: unknown): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  const text = typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`;
  await writeFile(path, text);
  return text;
}

/** A resolver whose `resolve` gives what it gives callers: a Request read, through a registry holding only it, from what it locates. */
export type RegisteredResolver<T extends Resolver> = Omit<T, 'resolve'> & { resolve(reference: string, context: ResolveContext): Promise<ResolvedRequest> };

/**
 * `resolver` behind a ResolverRegistry of its own, as callers meet it: what it locates comes back
 * pinned, parsed and validated. Everything else (`stats`, `root`, `close`) is the resolver's own.
 */
export function registered<T extends Resolver>(resolver: T): RegisteredResolver<T> {
  const registry = new ResolverRegistry([resolver]);
  const wrapped = Object.create(resolver) as RegisteredResolver<T>;
  wrapped.resolve = (reference, context) => registry.resolve(reference, context);
  return wrapped;
}

/** A small valid Request document. */
export function validDocument(name?: string): Record<string, unknown> {
  return {
    ...(name === undefined ? {} : { meta: { name } }),
    context: [
      { type: 'system', text: 'Summarise the input.' },
      { type: 'input', schema: { type: 'object', properties: { text: { type: 'string' } } } },
    ],
    schema: { type: 'object', properties: { summary: { type: 'string' } } },
  };
}

/** An invalid Request document: its first message lacks `text`, reported at `/context/0`. */
export function invalidDocument(): Record<string, unknown> {
  return { context: [{ type: 'system' }], schema: { type: 'object' } };
}

/** The pointer {@link invalidDocument}'s problem is reported at. */
export const INVALID_POINTER = '/context/0';

/** Awaits a rejection and asserts it is a DelegateError with `code`; returns it. */
export async function expectDelegateError(promise: Promise<unknown>, code: ErrorCode): Promise<DelegateError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error, `expected a DelegateError ${code}`).toBeInstanceOf(DelegateError);
  expect((error as DelegateError).code).toBe(code);
  return error as DelegateError;
}

/** Awaits a rejection and asserts it is a RequestError with a problem at `document` + `pointer`. */
export async function expectRequestError(promise: Promise<unknown>, document: string, pointer: string): Promise<RequestError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error, 'expected a RequestError').toBeInstanceOf(RequestError);
  const problems = (error as RequestError).problems;
  expect(problems).toContainEqual(expect.objectContaining({ document, pointer }));
  return error as RequestError;
}

/** One request the loopback server received. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** A loopback HTTP server on 127.0.0.1 with an ephemeral port. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** Every request received, in order. */
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Starts a server answering with `handler` and recording each request. */
export async function startServer(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<LoopbackServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers });
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A map of path → document text served as JSON with an ETag of its own, answering 304 on a matching `If-None-Match`. */
export function serveDocuments(documents: Record<string, string>, options: { etag?: boolean; contentType?: string } = {}) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const path = (request.url ?? '').replace(/\?.*$/, '');
    const text = documents[path];
    if (text === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const etag = `"${Buffer.from(text).toString('base64url').slice(0, 16)}-${text.length}"`;
    if (options.etag !== false && request.headers['if-none-match'] === etag) {
      response.writeHead(304, { etag }).end();
      return;
    }
    response.writeHead(200, {
      'content-type': options.contentType ?? 'application/json; charset=utf-8',
      ...(options.etag === false ? {} : { etag }),
    });
    response.end(text);
  };
}
