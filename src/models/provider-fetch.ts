/** The fetch the provider SDKs send with (MODEL-10): undici's request API behind a fetch-shaped function, with fetch itself for what that does not cover. */
import { Readable, type Transform, pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { isAbortError } from './abort-error.js';
import { ConnectionFailure } from './connection-failure.js';

type FetchInput = Parameters<typeof fetch>[0];

/**
 * Sends a provider request through undici's `request` (its dispatcher API) and hands the SDK a
 * standard `Response` whose body streams the answer. The SDKs only need status, headers and a
 * body stream; WHATWG fetch builds a Request, copies a body it may have to replay for a redirect,
 * and runs the fetch algorithm's bookkeeping around the same dispatch, which cost about twice the
 * CPU per call at a fan-out's rate of calls. A request this does not cover — a body that is not a
 * string, a `Request` object as input — goes through undici's fetch; a server that answers with a
 * redirect is asked again through fetch, which follows it (one more round trip).
 */
export const providerFetch = (async (input: FetchInput, init: RequestInit = {}): Promise<Response> => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
  try {
    return await send(input, url, init);
  } catch (error) {
    // Cancellation and our deadlines stay what they are; a network failure names where it tried (MODEL-12).
    if (init.signal?.aborted || isAbortError(error)) throw error;
    throw new ConnectionFailure(url ?? (input as Request).url, error);
  }
}) as typeof fetch;

/** Sends one request: through undici's request API when it covers it, else through fetch. */
async function send(input: FetchInput, url: string | undefined, init: RequestInit): Promise<Response> {
  const body = init.body;
  if (url === undefined || !(body === undefined || body === null || typeof body === 'string')) return viaFetch(input, init);
  // undici is loaded with the first model call, not by a run that calls no model (CLI-32).
  const { request } = await import('undici');
  const answer = await request(url, {
    method: (init.method ?? 'GET') as 'GET',
    headers: init.headers as Iterable<[string, string]> | Record<string, string> | undefined,
    body: body ?? null,
    signal: init.signal ?? undefined,
  });
  const { statusCode, headers } = answer;
  if (statusCode >= 300 && statusCode < 400 && headers.location !== undefined) {
    await answer.body.dump();
    return viaFetch(input, init);
  }
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) for (const one of value) responseHeaders.append(name, one);
    else if (value !== undefined) responseHeaders.append(name, value);
  }
  if (NULL_BODY_STATUSES.has(statusCode)) {
    await answer.body.dump();
    return new Response(null, { status: statusCode, headers: responseHeaders });
  }
  const codings = contentCodings(headers['content-encoding']);
  if (codings.length > 0) return decodedAnswer(statusCode, responseHeaders, answer.body, codings);
  if (statusCode >= 200 && statusCode < 300 && responseHeaders.get('content-type')?.startsWith('text/event-stream')) {
    return streamedAnswer(url, statusCode, responseHeaders, answer.body);
  }
  return new Response(Readable.toWeb(answer.body) as ReadableStream<Uint8Array>, { status: statusCode, headers: responseHeaders });
}

/** The body of an answer as undici's request API gives it: a Node stream that can also be read whole. */
type AnswerBody = Dispatcher.ResponseData['body'];

/**
 * A successful streamed answer as the SDKs read one (MODEL-10): status, headers, URL and a body
 * they iterate, which here is undici's own Node stream rather than a web stream wrapped around it.
 * Both SDKs iterate a body that is async-iterable directly; a web `ReadableStream` and the
 * `Response` holding it cost about a tenth of a delegate's CPU to build and read through, for
 * every answer of a fan-out. Reading the body whole works as on a `Response`; `clone()`, which
 * only the Anthropic SDK's middleware calls (this project configures none), reads nothing twice
 * and is refused.
 */
function streamedAnswer(url: string, status: number, headers: Headers, body: AnswerBody): Response {
  const answer = {
    ok: true,
    status,
    statusText: '',
    url,
    headers,
    redirected: false,
    type: 'basic',
    body,
    get bodyUsed() {
      return body.bodyUsed;
    },
    text: () => body.text(),
    json: () => body.json(),
    arrayBuffer: () => body.arrayBuffer(),
    blob: () => body.blob(),
    bytes: async () => new Uint8Array(await body.arrayBuffer()),
    formData: () => Promise.reject(new TypeError('A streamed model answer is not form data.')),
    clone: () => {
      throw new TypeError('A streamed model answer cannot be cloned: its body is read once, as it arrives.');
    },
  };
  return answer as unknown as Response;
}

/** The codings of a `content-encoding` header (repeated or not), the last applied first, `identity` left out. */
function contentCodings(encoding: string | string[] | undefined): string[] {
  if (encoding === undefined) return [];
  return (Array.isArray(encoding) ? encoding.join(',') : encoding)
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity')
    .reverse();
}

/** Node's decoder of each content coding undici's fetch decodes. */
const DECODERS: Record<string, () => Transform> = {
  gzip: () => createGunzip(),
  'x-gzip': () => createGunzip(),
  deflate: () => createInflate(),
  br: () => createBrotliDecompress(),
};

/**
 * An answer a server compressed, decoded (MODEL-10). No encoding is asked for, so a server that
 * follows HTTP sends its answer as it is; one that compresses anyway (a proxy) is decoded rather
 * than handed to the SDK as bytes it cannot read. Sending again through fetch, as a redirect is,
 * would pay for the model call twice. Codings are undone last applied first. Data that does not
 * decode, or is cut short, fails the body as a cut stream does; a coding this does not know fails
 * it from the start. A failure is an error of the answer, not of the connection: the SDKs retry a
 * fetch that throws as a connection error, and each retry is another paid model call. The decoders
 * are piped together, so a failure anywhere, or the SDK cancelling the body, ends them all and
 * releases the connection.
 */
function decodedAnswer(status: number, headers: Headers, body: AnswerBody, codings: readonly string[]): Response {
  headers.delete('content-encoding');
  headers.delete('content-length');
  const unknown = codings.find((coding) => DECODERS[coding] === undefined);
  if (unknown !== undefined) {
    // Read away (as far as undici reads a body it drops), not destroyed: a body destroyed without a reason errors on its own.
    body.dump().catch(() => undefined);
    const error = new TypeError(
      `The model server answered with the content coding "${unknown}", which cannot be decoded (known: ${Object.keys(DECODERS).join(', ')}).`,
    );
    return new Response(new ReadableStream({ start: (controller) => controller.error(error) }), { status, headers });
  }
  const decoded = pipeline([body, ...codings.map((coding) => DECODERS[coding]!())], () => undefined) as unknown as Readable;
  return new Response(Readable.toWeb(decoded) as ReadableStream<Uint8Array>, { status, headers });
}

/** Statuses whose response has no body (a `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** Undici's fetch, following redirects as fetch does. */
async function viaFetch(input: FetchInput, init: RequestInit): Promise<Response> {
  const { fetch: undiciFetch } = await import('undici');
  return undiciFetch(input as Parameters<typeof undiciFetch>[0], init as Parameters<typeof undiciFetch>[1]) as unknown as Promise<Response>;
}
