/** The fetch the provider SDKs send with (MODEL-10): undici's, without the per-request copy of the body that following redirects needs. */
import { fetch as undiciFetch } from 'undici';

/**
 * Sends a provider request with `redirect: 'error'` and no window, the one case in which fetch
 * does not copy the request (teeing its body stream) in case a redirect must be replayed: a
 * quarter of fetch's own work at a fan-out's rate of calls. A server that does redirect (a proxy
 * moving `/v1` elsewhere, say) is asked again the ordinary way, so redirects still work; they
 * cost one extra round trip. The body the SDKs pass is a string, so asking again resends it whole.
 */
export const providerFetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
  const direct = { ...init, redirect: 'error', window: null } as Parameters<typeof undiciFetch>[1];
  try {
    return (await undiciFetch(input as Parameters<typeof undiciFetch>[0], direct)) as unknown as Response;
  } catch (error) {
    if (!isRedirectRefused(error) || init?.signal?.aborted) throw error;
    return (await undiciFetch(input as Parameters<typeof undiciFetch>[0], init as Parameters<typeof undiciFetch>[1])) as unknown as Response;
  }
}) as typeof fetch;

/** True for the error fetch throws when `redirect: 'error'` meets a redirect. */
function isRedirectRefused(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return error instanceof TypeError && cause instanceof Error && /redirect/i.test(cause.message);
}
