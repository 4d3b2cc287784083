/** A request and its answer without web objects: how the Node listener and the handler talk on the fast path for GET and HEAD (SERVE-12). */

/** What the handler needs of a GET or HEAD: the facts of the request line and the one header it reads. */
export interface PlainRequest {
  /** The request method, e.g. `GET`. */
  method: string;
  /** The request-target exactly as received, in origin-form (it starts with `/`); judged as sent (SERVE-7). */
  target: string;
  /** The `If-None-Match` header (several joined by `, `), or null. */
  ifNoneMatch: string | null;
  /** The client's address, for the access log. */
  remoteAddress?: string;
}

/** An answer ready to be written: every header it carries (`content-length` included when it has a body). */
export interface PlainReply {
  /** The status code. */
  status: number;
  /** The response headers, lower-case names; shared between answers, so never changed. */
  headers: Readonly<Record<string, string>>;
  /** The body; a HEAD request gets the headers only, and a `304` has none. */
  body?: Uint8Array;
}

/** Answers a plain request; never rejects (a failure is a `500` reply). */
export type PlainHandler = (request: PlainRequest) => Promise<PlainReply>;
