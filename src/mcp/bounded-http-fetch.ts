/** The fetch of the Streamable HTTP transport, bounded (MCP-18, MCP-20): a call's answer over the limit, or a call's stream that ends or breaks before its answer, fails that call at once. */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { errorAnswer, MessageHead, oversizedAnswer } from './oversized-answer.js';

const NEWLINE = 0x0a;
/** The field name of an event's data line, compared against every line of a call's stream. */
const DATA_FIELD = Buffer.from('data:');
const encoder = new TextEncoder();

/** The id of the call a POST carries (the SDK posts one message at a time), or undefined for a notification or an answer. */
function callIdOf(body: RequestInit['body']): string | number | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    // The client's own message, serialised by the SDK a moment ago: not untrusted text.
    const message = JSON.parse(body) as { id?: unknown; method?: unknown };
    return typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number') ? message.id : undefined;
  } catch {
    return undefined;
  }
}

/** One server-sent event holding `message`, as the SDK reads it. */
function eventOf(message: JSONRPCMessage): Uint8Array {
  return encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

/** A response like `response` with another body. */
function withBody(response: Response, body: ReadableStream<Uint8Array> | Uint8Array): Response {
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** Why a read failed, in words. */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { message?: unknown } }).cause?.message;
  return typeof cause === 'string' ? `${(error as Error).message} (${cause})` : String((error as Error).message ?? error);
}

/**
 * A fetch for the SDK's Streamable HTTP client transport (MCP-18, MCP-20). The answers of a POST
 * carrying a call are read through it: a JSON answer over `limit` bytes, or an event of the call's
 * event stream over it, is replaced by an error answer for that call naming the limit; a call's event
 * stream that ends or breaks before it answers the call ends with an error answer saying so. So a
 * server that dies mid-call fails the call at once (as a stdio server's exit does) rather than after
 * the call's idle timeout, and no answer past the limit is kept. A fetch that fails says its cause.
 */
export function boundedHttpFetch(limit: number, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    let response: Response;
    try {
      response = await base(url, init);
    } catch (error) {
      if (init?.signal?.aborted) throw error;
      throw new Error(`the server cannot be reached: ${reasonOf(error)}`, { cause: error });
    }
    if (!response.ok || response.body === null) return response;
    const call = init?.method === 'POST' ? callIdOf(init.body) : undefined;
    const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    if (type === 'text/event-stream') return withBody(response, boundedEvents(response.body, limit, call));
    if (type === 'application/json' && call !== undefined) return withBody(response, await boundedJson(response, limit, call));
    return response;
  };
}

/** A JSON answer read to its end, or the error answer for call `id` once it passes `limit` bytes. */
async function boundedJson(response: Response, limit: number, id: string | number): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const tooBig = (size?: number) => {
    void reader.cancel().catch(() => undefined);
    return encoder.encode(JSON.stringify(oversizedAnswer(id, limit, size)));
  };
  if (declared > limit) return tooBig(declared);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let read: Awaited<ReturnType<typeof reader.read>>;
    try {
      read = await reader.read();
    } catch (error) {
      throw new Error(`the connection to the server broke before it answered: ${reasonOf(error)}`, { cause: error });
    }
    if (read.done) return Buffer.concat(chunks, size);
    size += read.value.length;
    if (size > limit) return tooBig();
    chunks.push(read.value);
  }
}

/**
 * An event stream passed on one whole event at a time, each of at most `limit` bytes. On the stream
 * of call `id`, an event past the limit ends the stream with an error answer for the call, and so
 * does the stream's end or break before an event answered the call.
 */
function boundedEvents(body: ReadableStream<Uint8Array>, limit: number, id: string | number | undefined): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let lines: Buffer[] = [];
  let eventBytes = 0;
  let partial: Buffer[] = [];
  let answered = id === undefined;
  let over = false;
  /** How many events were passed on. */
  let passed = 0;

  /** Whether the event of `eventLines` answers the call: its data's top level has the call's id and no method. */
  const answers = (eventLines: Buffer[]): boolean => {
    const head = new MessageHead();
    for (const line of eventLines) {
      if (!line.subarray(0, DATA_FIELD.length).equals(DATA_FIELD)) continue;
      head.feed(line.subarray(line[5] === 0x20 ? 6 : 5));
    }
    return !head.hasMethod && head.id() === id;
  };

  const end = (controller: ReadableStreamDefaultController<Uint8Array>, why: string) => {
    if (!answered && id !== undefined) controller.enqueue(eventOf(errorAnswer(id, why)));
    answered = true;
    controller.close();
  };

  const take = (chunk: Uint8Array, controller: ReadableStreamDefaultController<Uint8Array>) => {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (;;) {
      const newline = bytes.indexOf(NEWLINE, start);
      const piece = bytes.subarray(start, newline === -1 ? bytes.length : newline + 1);
      eventBytes += piece.length;
      if (eventBytes > limit) {
        over = true;
        if (!answered && id !== undefined) controller.enqueue(eventOf(oversizedAnswer(id, limit)));
        answered = true;
        return;
      }
      if (newline === -1) {
        if (piece.length > 0) partial.push(piece);
        return;
      }
      const line = partial.length === 0 ? piece : Buffer.concat([...partial, piece]);
      partial = [];
      start = newline + 1;
      // A line of nothing but its line end (\n or \r\n) ends the event.
      if (line.length === 1 || (line.length === 2 && line[0] === 0x0d)) {
        if (lines.length > 0) {
          if (!answered && answers(lines)) answered = true;
          controller.enqueue(Buffer.concat([...lines, line]));
          passed++;
        }
        lines = [];
        eventBytes = 0;
      } else lines.push(line);
    }
  };

  return new ReadableStream<Uint8Array>({
    // A pull that passes nothing on is not pulled again, so it reads until a whole event is passed on.
    async pull(controller) {
      const before = passed;
      while (passed === before) {
        let read: Awaited<ReturnType<typeof reader.read>>;
        try {
          read = await reader.read();
        } catch (error) {
          return end(controller, `the connection to the server broke before it answered: ${reasonOf(error)} (MCP-18)`);
        }
        if (read.done) return end(controller, 'the server ended the stream of the call without answering it (MCP-18)');
        take(read.value, controller);
        if (over) {
          void reader.cancel().catch(() => undefined);
          return controller.close();
        }
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
