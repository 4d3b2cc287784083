/** Answers the client gives itself for a call whose real answer it will not read (MCP-18, MCP-20): the call's id found in a message too big to keep, and the JSON-RPC errors that fail that call alone. */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The JSON-RPC error code of the answers below: the SDK's "internal error". */
const INTERNAL_ERROR = -32603;

/** A byte count in words: `10,485,760 bytes`. */
export function bytesInWords(bytes: number): string {
  return `${bytes.toLocaleString('en-US')} bytes`;
}

/** What a message's top level says, read byte by byte without keeping the message: its `id` and whether it has a `method`. */
export class MessageHead {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  private inKey = false;
  private key: number[] = [];
  /** The key just read is `id`: its value comes after the colon. */
  private idNext = false;
  private capturing = false;
  private captured: number[] = [];
  private idText: string | undefined;
  /** True once the top level showed a `method`: the message is a request or a notification, never an answer. */
  hasMethod = false;

  /** Reads the next bytes of the message. */
  feed(bytes: Uint8Array): void {
    for (const byte of bytes) this.step(byte);
  }

  /** The message's `id` when it has one (a number or a string at its top level). */
  id(): string | number | undefined {
    if (this.idText === undefined) return undefined;
    try {
      const id: unknown = JSON.parse(this.idText);
      return typeof id === 'string' || typeof id === 'number' ? id : undefined;
    } catch {
      return undefined;
    }
  }

  private step(byte: number): void {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (byte === 0x5c) this.escaped = true;
      else if (byte === 0x22) {
        this.inString = false;
        if (this.inKey) this.endKey();
        else if (this.capturing) this.captured.push(byte);
        return;
      }
      // Keys and ids are short: what is longer is not one worth keeping.
      if (this.inKey && this.key.length < 8) this.key.push(byte);
      else if (this.capturing && this.captured.length < 256) this.captured.push(byte);
      return;
    }
    if (this.capturing) {
      if (this.depth === 1 && (byte === 0x2c || byte === 0x7d)) {
        this.capturing = false;
        this.idText = Buffer.from(this.captured).toString('utf8').trim();
      } else if (byte === 0x7b || byte === 0x5b) {
        // An object or array is no id.
        this.capturing = false;
      } else {
        if (byte === 0x22) this.inString = true;
        if (this.captured.length < 256) this.captured.push(byte);
        return;
      }
    }
    switch (byte) {
      case 0x22:
        this.inString = true;
        if (this.depth === 1 && this.expectKey) {
          this.inKey = true;
          this.key = [];
        }
        break;
      case 0x7b:
      case 0x5b:
        this.depth++;
        if (this.depth === 1) this.expectKey = byte === 0x7b;
        break;
      case 0x7d:
      case 0x5d:
        this.depth--;
        break;
      case 0x2c:
        if (this.depth === 1) this.expectKey = true;
        break;
      case 0x3a:
        if (this.depth === 1) {
          this.expectKey = false;
          this.capturing = this.idNext;
          this.captured = [];
          this.idNext = false;
        }
        break;
    }
  }

  private endKey(): void {
    this.inKey = false;
    const key = Buffer.from(this.key).toString('latin1');
    if (key === 'method') this.hasMethod = true;
    this.idNext = key === 'id';
  }
}

/**
 * The error answer that fails call `id` because its answer is over `limit` bytes (MCP-20): `size`
 * is the answer's size when it was read to its end, else it is known only to pass the limit.
 */
export function oversizedAnswer(id: string | number, limit: number, size?: number): JSONRPCMessage {
  const said = size === undefined ? 'is' : `is ${bytesInWords(size)},`;
  return errorAnswer(id, `the server's answer ${said} more than the limit of ${bytesInWords(limit)} (maxResultBytes, MCP-20)`);
}

/** The error answer that fails call `id` for `why`, as if the server had said it. */
export function errorAnswer(id: string | number, why: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message: why } };
}
