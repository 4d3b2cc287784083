/** Host allow-lists (`host` or `host:port` entries) for URL delegates: which hosts may be fetched, which are trusted. */
import { UsageError } from '../protocol/errors.js';

/** One parsed entry: a normalised host name and, when the entry named one, a port. */
export interface HostEntry {
  /** Lower-case host as `URL.hostname` spells it (IPv6 in brackets, IDN in punycode). */
  host: string;
  /** The port the entry is limited to; absent = any port. */
  port?: number;
}

/**
 * Parses `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address. Host names are
 * normalised like URLs normalise them, so `Example.COM` matches `http://example.com/`.
 * Throws UsageError for an entry that is not a host.
 */
export function parseHostEntry(entry: string): HostEntry {
  const trimmed = entry.trim();
  // A bare IPv6 address has several colons and no brackets: it names no port.
  const text = !trimmed.startsWith('[') && (trimmed.match(/:/g)?.length ?? 0) > 1 ? `[${trimmed}]` : trimmed;
  const match = /^(\[[^\]]+\]|[^:/?#@\s]+)(?::(\d{1,5}))?$/.exec(text);
  let host: string | undefined;
  try {
    host = match ? new URL(`http://${match[1]}/`).hostname : undefined;
  } catch {
    host = undefined;
  }
  const port = match?.[2] === undefined ? undefined : Number(match[2]);
  if (!host || (port !== undefined && (port < 1 || port > 65535))) {
    throw new UsageError(`Expected a host allow-list entry as "host" or "host:port" (e.g. "example.com" or "127.0.0.1:8787"), got "${entry}".`);
  }
  return port === undefined ? { host } : { host, port };
}

/** The port a URL connects to: its explicit port, else the scheme's default. */
export function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * A list of host entries. An entry with a port matches exactly that host and port; an entry
 * without a port matches the host on any port.
 */
export class HostList {
  /** The parsed entries. */
  readonly entries: readonly HostEntry[];

  constructor(entries: readonly string[] = []) {
    this.entries = entries.map(parseHostEntry);
  }

  /** True when the URL's host (and port) is on the list. */
  matches(url: URL): boolean {
    const port = portOf(url);
    return this.entries.some((entry) => entry.host === url.hostname && (entry.port === undefined || entry.port === port));
  }

  /** The entries as written back (`host` or `host:port`), for error messages. */
  describe(): string {
    if (this.entries.length === 0) return '(none)';
    return this.entries.map((entry) => (entry.port === undefined ? entry.host : `${entry.host}:${entry.port}`)).join(', ');
  }
}
