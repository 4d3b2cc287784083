/** A child run's job on the queue (QUEUE-2, QUEUE-23, QUEUE-24): built by the caller from what a caller may decide, signed, and checked by the worker before anything runs. */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isAbsolute, relative, sep } from 'node:path';
import { DelegateError, formatProblem, RequestError, type ProtocolError } from '../protocol/errors.js';
import type { HandlerRegistry } from '../protocol/messages/handlers.js';
import { validateRequest } from '../protocol/messages/load-request.js';
import type { RemoteChild } from '../protocol/contracts.js';
import type { TraceContext } from '../protocol/trace/trace.js';
import { compileSchema, describeErrors } from '../protocol/schemas.js';
import type { JsonSchema, Message, RequestDocument } from '../protocol/types.js';
import { hasScheme, isHttpUrl, isInside } from '../resolvers/reference-forms.js';
import type { ResolveContext, ResolvedRequest } from '../resolvers/resolver.js';

/** The environment variable holding the key jobs are signed with, on the caller and on every worker (QUEUE-24). */
export const QUEUE_KEY_VARIABLE = 'DELEGATE_QUEUE_KEY';

/**
 * The child's document as a job carries it (QUEUE-23): a reference the worker resolves with its own
 * resolvers (the file's absolute path, which must be under the worker's root, or a URL) and the messages its context has after the
 * document's own (DEL-9); or, for a document that lives at no reference (an anonymous delegate, a
 * `delegate` tool's worker, DEL-6, DEL-24), the document itself, which a worker runs untrusted.
 */
export type JobRequest = { reference: string; context: Message[] } | { document: RequestDocument; location: string; name: string };

/** What a job's data holds of its child (QUEUE-2): never its trust, and its model only as a wish the worker may refuse. */
export interface JobChild extends Omit<RemoteChild, 'request' | 'trusted' | 'scoped'> {
  request: JobRequest;
  /** The W3C trace context of the delegating call's span, signed with the rest: the worker's spans are its children (TEL-6). */
  traceContext?: TraceContext;
}

/** A job's data: the child and, when the caller holds a key, the HMAC-SHA256 of the child's JSON (QUEUE-24). */
export interface JobData {
  child: JobChild;
  signature?: string;
}

const identifier = { type: 'string', minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.:~-]+$' };
const whole = (minimum: number) => ({ type: 'integer', minimum });
const object = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required, additionalProperties: false });

/** The schema of a job's data (QUEUE-2): anything else is refused before it runs, naming the pointer (QUEUE-23). */
const JOB_SCHEMA = object(
  {
    child: object(
      {
        id: identifier,
        parent: object(
          {
            run: identifier,
            depth: whole(0),
            callId: { type: 'string', maxLength: 200 },
            root: identifier,
            // The callers' run ids, the top run first: what a session approval's scope is judged by (CALL-11).
            lineage: { type: 'array', maxItems: 1000, items: identifier },
          },
          ['run', 'depth', 'callId', 'root'],
        ),
        request: {
          oneOf: [
            object({ reference: { type: 'string', minLength: 1, maxLength: 2048 }, context: { type: 'array', items: { type: 'object' } } }, [
              'reference',
              'context',
            ]),
            object({ document: { type: 'object' }, location: { type: 'string', minLength: 1, maxLength: 2048 }, name: { type: 'string', maxLength: 2048 } }, [
              'document',
              'location',
              'name',
            ]),
          ],
        },
        input: true,
        model: { type: ['string', 'null'], maxLength: 2048 },
        standsFor: { type: 'string', maxLength: 2048 },
        worker: { type: 'boolean' },
        files: {
          type: 'array',
          items: object({ path: { type: 'string' }, mediaType: { type: 'string' }, base64: { type: 'string', contentEncoding: 'base64' } }, [
            'path',
            'mediaType',
            'base64',
          ]),
        },
        options: object({ maxDepth: whole(0), resolve: { enum: ['runtime', 'upfront'] }, maxSteps: whole(1) }),
        budget: object({ tokens: { type: 'number', minimum: 0 }, costUsd: { type: 'number', minimum: 0 } }),
        limits: object({ maxRuns: whole(1), maxConcurrency: whole(1) }, ['maxRuns', 'maxConcurrency']),
        journal: object({ session: whole(0), events: { type: 'array', items: { type: 'object' } } }, ['session', 'events']),
        traceContext: object({ traceparent: { type: 'string', maxLength: 128 }, tracestate: { type: 'string', maxLength: 512 } }, ['traceparent']),
      },
      ['id', 'parent', 'request', 'model', 'options', 'limits'],
    ),
    signature: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  },
  ['child'],
) as JsonSchema;

/**
 * The job of a child run (QUEUE-2, QUEUE-23): a document resolved from a file or a URL travels as
 * its reference (the file's absolute path, or the URL) and the messages added to its context; any
 * other document travels whole. The delegating call's trace context, when its spans are exported,
 * travels too (TEL-6). Signed with `key` when there is one (QUEUE-24).
 */
export function jobOf(child: RemoteChild, key: string | undefined, traceContext?: TraceContext): JobData {
  const { request, trusted: _trusted, scoped, ...rest } = child;
  const reference = scoped !== undefined && (isHttpUrl(request.location) || isAbsolute(request.location)) ? request.location : undefined;
  const carried: JobChild = {
    ...rest,
    request: reference === undefined ? { document: request.document, location: request.location, name: request.name } : { reference, context: scoped ?? [] },
    ...(traceContext === undefined ? {} : { traceContext }),
  };
  return key === undefined ? { child: carried } : { child: carried, signature: signatureOf(carried, key) };
}

/** The HMAC-SHA256 of the child's JSON under `key`, in hex (QUEUE-24). */
function signatureOf(child: JobChild, key: string): string {
  return createHmac('sha256', key).update(JSON.stringify(child)).digest('hex');
}

/**
 * A job's data checked (QUEUE-23, QUEUE-24): its shape against the job schema, naming each pointer
 * and what was expected (`invalid_request`), then, when the worker holds `key`, its signature
 * (`delegate_forbidden`). Never throws.
 */
export function readJob(data: unknown, key: string | undefined, jobId: string): { ok: true; child: JobChild } | { ok: false; error: ProtocolError } {
  const validate = compileSchema(JOB_SCHEMA);
  if (!validate(data)) {
    const problems = describeErrors(validate.errors).map((issue) => ({ document: `job ${jobId}`, pointer: issue.pointer, message: issue.message }));
    const listed = problems.map((problem) => `  ${formatProblem(problem)}`).join('\n');
    return {
      ok: false,
      error: new DelegateError('invalid_request', `The job ${jobId} is not a child run's job (spec/queue.md QUEUE-2):\n${listed}`, { job: jobId, problems }),
    };
  }
  const { child, signature } = data as JobData;
  if (key !== undefined) {
    const refuse = (why: string) =>
      new DelegateError('delegate_forbidden', `The job ${jobId} is refused: ${why} (${QUEUE_KEY_VARIABLE}, spec/queue.md QUEUE-24).`, { job: jobId });
    if (signature === undefined) return { ok: false, error: refuse("it is not signed, and this worker runs only jobs signed with the queue's key") };
    const expected = Buffer.from(signatureOf(child, key), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return { ok: false, error: refuse("its signature is not that of the queue's key") };
  }
  return { ok: true, child };
}

/** What the worker resolves a job's reference with: its own resolvers, confined to its `--root` and hosts (DEL-3). */
export interface JobResolver {
  resolve(reference: string, context: ResolveContext): Promise<ResolvedRequest>;
}

/** The message types a job may not add to a trusted child: they would hand the caller's tools to the worker (QUEUE-23). */
const TOOL_TYPES = new Set(['tool', 'toolset']);

/**
 * The child a checked job describes, as this worker runs it (QUEUE-23): a reference resolved with
 * the worker's own resolvers — a path under its root, a URL from its hosts — and trusted as they say
 * (DEL-7), unless the messages the job adds hold tools; a document carried whole, untrusted. The
 * document is validated as any document is (DEL-8). Throws the resolver's or validation's error.
 */
export async function childOfJob(
  job: JobChild,
  setting: { resolvers: JobResolver; handlers: HandlerRegistry; root: string; signal?: AbortSignal },
): Promise<RemoteChild> {
  const { request, ...rest } = job;
  if ('document' in request) {
    if (!hasScheme(request.location) || isHttpUrl(request.location) || request.location.startsWith('file:')) {
      throw new RequestError([
        {
          document: `job ${job.id}`,
          pointer: '/child/request/location',
          message: `A document carried whole has a location of its own kind (such as anonymous:<tool>), not a path or URL; got "${request.location}". A document at a path or URL travels as its reference.`,
        },
      ]);
    }
    const loaded = validateRequest(request.document, request.location, setting.handlers);
    return { ...rest, request: { ...loaded, name: request.name || loaded.name }, trusted: false };
  }
  if (hasScheme(request.reference) && !isHttpUrl(request.reference)) {
    throw new RequestError([
      {
        document: `job ${job.id}`,
        pointer: '/child/request/reference',
        message: `A job's reference is a file's path under the worker's root or an http(s) URL; got "${request.reference}".`,
      },
    ]);
  }
  const resolved = await setting.resolvers.resolve(underRoot(request.reference, setting.root, job.id), {
    toolName: '(job)',
    tool: {},
    ...(setting.signal ? { signal: setting.signal } : {}),
  });
  const document = { ...resolved.document, context: [...resolved.document.context, ...request.context] };
  // The added messages are validated with the document they join, as in process (DEL-8).
  const loaded = request.context.length === 0 ? { document } : validateRequest(document, resolved.location, setting.handlers);
  const lendsTools = request.context.some((message) => TOOL_TYPES.has(message.type));
  return { ...rest, request: { document: loaded.document, location: resolved.location, name: resolved.name }, trusted: resolved.trusted && !lendsTools };
}

/**
 * A job's reference as the worker's file resolver takes it (QUEUE-23): an absolute path under the
 * worker's root as the path relative to the root (the resolver confines it again, links
 * included); an absolute path elsewhere is refused before anything is read; a URL as is.
 */
function underRoot(reference: string, root: string, jobId: string): string {
  if (isHttpUrl(reference) || !isAbsolute(reference)) return reference;
  if (!isInside(root, reference) || reference === root) {
    throw new DelegateError(
      'delegate_forbidden',
      `The job ${jobId} names the document ${reference}, outside this worker's root ${root}: a worker runs only the documents under its --root.`,
      { reference, root },
    );
  }
  return relative(root, reference).split(sep).join('/');
}
