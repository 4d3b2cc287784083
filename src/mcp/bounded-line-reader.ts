/** The stdio transport's reader of a server's lines, bounded (MCP-20): a message past the limit is not kept, and fails only the call it answers. */
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { bytesInWords, MessageHead, oversizedAnswer } from './oversized-answer.js';

const NEWLINE = 0x0a;

/**
 * What the SDK's stdio client transport asks of its read buffer. The SDK's own keeps any number of
 * bytes up to its limit across lines and, past it, closes the whole connection, which reads as "the
 * server cannot be reached" to every call: this one bounds each line instead.
 */
export interface LineReader {
  append(chunk: Buffer): void;
  readMessage(): JSONRPCMessage | null;
  clear(): void;
}

/**
 * A reader of newline-delimited JSON-RPC messages where one line may hold at most `limit` bytes
 * (MCP-20). A longer line is read to its end but not kept: only its top-level `id` is, and the
 * call it answers gets an error answer naming its size, so the connection and its other calls go
 * on. A longer line that answers nothing (a request or notification of the server) is dropped,
 * said as an error to the transport.
 */
export class BoundedLineReader implements LineReader {
  /** The current line's bytes so far, while within the limit. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The current line once past the limit: its size so far and what its top level said. */
  private skipping: { size: number; head: MessageHead } | undefined;
  /** Complete lines, or the messages that stand for lines too long, in order. */
  private readonly ready: (Buffer | JSONRPCMessage | Error)[] = [];

  constructor(private readonly limit: number) {}

  append(chunk: Buffer): void {
    let start = 0;
    while (start <= chunk.length) {
      const end = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      if (this.skipping === undefined && this.pendingBytes + piece.length > this.limit) {
        const head = new MessageHead();
        for (const part of this.pending) head.feed(part);
        this.skipping = { size: this.pendingBytes, head };
        this.pending = [];
        this.pendingBytes = 0;
      }
      if (this.skipping !== undefined) {
        this.skipping.size += piece.length;
        this.skipping.head.feed(piece);
      } else if (piece.length > 0) {
        this.pending.push(piece);
        this.pendingBytes += piece.length;
      }
      if (end === -1) return;
      this.endLine();
      start = end + 1;
    }
  }

  readMessage(): JSONRPCMessage | null {
    const next = this.ready.shift();
    if (next === undefined) return null;
    if (next instanceof Error) throw next;
    if (!Buffer.isBuffer(next)) return next;
    return deserializeMessage(next.toString('utf8').replace(/\r$/, ''));
  }

  clear(): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.skipping = undefined;
    this.ready.length = 0;
  }

  private endLine(): void {
    const skipped = this.skipping;
    if (skipped !== undefined) {
      this.skipping = undefined;
      const id = skipped.head.hasMethod ? undefined : skipped.head.id();
      this.ready.push(
        id === undefined
          ? new Error(`A message of ${bytesInWords(skipped.size)} from the server was dropped: more than the limit of ${bytesInWords(this.limit)} (MCP-20).`)
          : oversizedAnswer(id, this.limit, skipped.size),
      );
      return;
    }
    if (this.pendingBytes === 0) return;
    const line = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.ready.push(line);
  }
}
