/** The `_delegate` forms that name an A2A agent (DEL-31): cheap to test, so a run that never delegates to one loads no A2A code. */

/** Where an agent card is published below an A2A agent's base URL (A2A's well-known path). */
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

/** An A2A agent named by a `_delegate`: its base URL and the URL of its card. */
export interface A2aLocation {
  /** The agent's base URL, without a trailing slash (the URL an `a2a+` reference names, without `a2a+`). */
  base: string;
  /** Where its agent card is read: `<base>/.well-known/agent-card.json`. */
  card: string;
}

/**
 * True when a `_delegate` names an A2A agent (DEL-31): `a2a+http://…` or `a2a+https://…` (the
 * agent's base URL), or an absolute `http(s)` URL whose path ends in `/.well-known/agent-card.json`
 * (its card).
 */
export function isA2aReference(reference: string): boolean {
  if (/^a2a\+https?:\/\//i.test(reference)) return true;
  if (!/^https?:\/\//i.test(reference)) return false;
  const path = reference.replace(/[?#].*$/s, '');
  return path.endsWith(AGENT_CARD_PATH);
}

/**
 * The base URL and card URL of an A2A reference (DEL-31). Returns `undefined` when the text after
 * `a2a+` is not a URL; the caller refuses it with `delegate_not_found`.
 */
export function a2aLocation(reference: string): A2aLocation | undefined {
  const plain = reference.replace(/^a2a\+/i, '');
  let url: URL;
  try {
    url = new URL(plain);
  } catch {
    return undefined;
  }
  url.hash = '';
  url.search = '';
  if (url.pathname.endsWith(AGENT_CARD_PATH)) {
    const card = url.href;
    url.pathname = url.pathname.slice(0, -AGENT_CARD_PATH.length);
    return { base: url.href.replace(/\/$/, ''), card };
  }
  const base = url.href.replace(/\/$/, '');
  return { base, card: `${base}${AGENT_CARD_PATH}` };
}
