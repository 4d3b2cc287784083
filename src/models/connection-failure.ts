/** A model request that never got an answer from its server (spec/models.md MODEL-12): the endpoint it tried and why, in words. */

/**
 * The failure of a provider request to reach its endpoint: thrown by the provider fetch in place of
 * the network error, which stays its `cause` (so the retry policy still finds the error's code,
 * MODEL-3). The SDKs wrap it in their connection error ("Connection error."), and the retry policy
 * finds it underneath to name what was tried.
 */
export class ConnectionFailure extends Error {
  /** `scheme://host:port/path` of the request, without credentials, query or fragment. */
  readonly endpoint: string;

  constructor(url: string, cause: unknown) {
    // The cause's own words, so an SDK that reads the message (OpenAI looks for "timed out") reads what it always read.
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'ConnectionFailure';
    this.endpoint = endpointOf(url);
  }
}

/**
 * What a log may show of a request URL (MODEL-12): scheme, host, port and path. Credentials, the
 * query (where some servers take a key) and the fragment are left out; the port is always written,
 * the scheme's default included, so "which port" never needs guessing.
 */
export function endpointOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(an unparsable URL)';
  }
  const port = parsed.port || (parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : '');
  return `${parsed.protocol}//${parsed.hostname}${port ? `:${port}` : ''}${parsed.pathname}`;
}

/** Network error codes in words; the code itself follows in parentheses. */
const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'the connection was reset',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (the DNS lookup failed for now)',
  ETIMEDOUT: 'connecting timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  EPIPE: 'the connection was closed while sending',
  UND_ERR_CONNECT_TIMEOUT: 'connecting timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer arrived in time',
  UND_ERR_BODY_TIMEOUT: 'the answer stalled',
  UND_ERR_SOCKET: 'the connection closed',
  UND_ERR_CLOSED: 'the connection closed',
};

/** A code of a failed TLS handshake or certificate check (Node's `ERR_TLS_*`, OpenSSL's `*CERT*`, `EPROTO`). */
function isTlsCode(code: string): boolean {
  return code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.includes('CERT') || code === 'EPROTO';
}

/** The innermost error of `error`'s cause chain that carries a string `code`, if any. */
function codedCause(error: unknown): { code: string; message: string } | undefined {
  let found: { code: string; message: string } | undefined;
  for (let cause: unknown = error, depth = 0; cause && depth < 8; depth += 1) {
    const { code, message, reason, errors } = cause as { code?: unknown; message?: unknown; reason?: unknown; errors?: unknown };
    // OpenSSL's message is its whole error line; its `reason` is the words ("wrong version number").
    const words = typeof reason === 'string' ? reason : typeof message === 'string' ? (message.split('\n')[0] ?? message) : code;
    if (typeof code === 'string') found = { code, message: words as string };
    // Node tries every address of a name and reports them together; the first says the same as the rest.
    cause = (cause as { cause?: unknown }).cause ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  return found;
}

/** The connection failure in `error`'s cause chain, if the request failed before any answer (MODEL-12). */
export function connectionFailureIn(error: unknown): ConnectionFailure | undefined {
  for (let cause: unknown = error, depth = 0; cause && depth < 8; cause = (cause as { cause?: unknown }).cause, depth += 1) {
    if (cause instanceof ConnectionFailure) return cause;
  }
  return undefined;
}

/**
 * Why a request failed, in words with the code (MODEL-12): "connection refused (ECONNREFUSED)",
 * "the host name does not resolve (ENOTFOUND)", "TLS failed: <reason> (<code>)"; the innermost
 * message with its code for other codes; the error's message when nothing in it has a code.
 */
export function describeConnectionCause(error: unknown): string {
  const coded = codedCause(error);
  if (coded === undefined) return error instanceof Error ? error.message : String(error);
  const words = CAUSES[coded.code];
  if (words !== undefined) return `${words} (${coded.code})`;
  if (isTlsCode(coded.code)) return `TLS failed: ${coded.message} (${coded.code})`;
  return `${coded.message} (${coded.code})`;
}
