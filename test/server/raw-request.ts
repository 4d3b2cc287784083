/** A byte-exact HTTP/1.1 client for tests: sends the request-target as written, with no URL parsing on the way. */
import { connect } from 'node:net';

/** A response read off a raw socket. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as latin1 text (chunked framing, if any, is left in). */
  body: string;
  /** The body's bytes. */
  bytes: Buffer;
}

/**
 * Sends `<method> <target>` byte for byte (no URL parsing on the way) and reads the whole answer; the
 * connection is closed by the request's `connection: close`.
 */
export function rawRequest(port: number, target: string, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const text = all.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...headerLines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4), bytes: all.subarray(split + 4) });
    });
    socket.write(`${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`, 'latin1');
  });
}
