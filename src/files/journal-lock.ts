/** The journal's lock (spec/journal.md JOURNAL-11): one writer at a time, through a lock file beside the journal created with O_EXCL and naming its holder. */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { UsageError } from '../protocol/errors.js';
import { parseJson } from '../protocol/json.js';

/** A lock held on one journal; {@link JournalLock.release} is harmless when called again. */
export interface JournalLock {
  /** The lock file: `<journal>.lock`. */
  readonly path: string;
  /** Removes the lock file, if it is still this lock's. */
  release(): void;
}

/** Who holds a lock, as its file says. */
interface Holder {
  pid: number;
  host: string;
  since: string;
}

/** How long a lock file may stay without a holder written in it before it counts as left by a writer killed while taking it. */
const UNWRITTEN_MS = 5_000;

/** The locks this process holds: every way out of it removes them, `process.exit` and a second signal included. */
const held = new Set<JournalLock>();
process.on('exit', () => {
  for (const lock of held) lock.release();
});

/**
 * Takes the journal's lock (JOURNAL-11): creates `<journal>.lock` with O_EXCL, holding this
 * process's pid, host and start time. A lock held by a live process, or by any process of another
 * host, is a UsageError naming the holder; a lock whose process is gone from this host (killed with
 * SIGKILL) is stale and taken over. Any other failure to create the file throws as `openSync` does.
 */
export function lockJournal(journal: string): JournalLock {
  const path = `${journal}.lock`;
  const own: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  const text = `${JSON.stringify(own)}\n`;
  // A few rounds: between reading a lock and taking it, its holder may release it or another writer take it.
  for (let round = 0; round < 5; round++) {
    if (create(path, text)) return track(path, text);
    const holder = holderOf(path);
    if (holder === 'gone') continue;
    if (holder === 'being taken') throw beingTaken(journal, path, 'its lock names no holder yet');
    if (!isStale(holder)) throw refusal(journal, path, holder);
    if (!takeOver(path, holder)) throw beingTaken(journal, path, `another run is taking over the stale lock of process ${holder.pid}`);
  }
  throw new UsageError(`Cannot lock the journal ${journal}: its lock ${path} kept changing hands; try again.`, { journal, lock: path });
}

/** Creates the lock file holding `text`, or returns false when it exists. */
function create(path: string, text: string): boolean {
  let descriptor: number;
  try {
    descriptor = openSync(path, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(descriptor, text);
  } finally {
    closeSync(descriptor);
  }
  return true;
}

/** A lock this process now holds, released on every way out of the process. */
function track(path: string, text: string): JournalLock {
  const lock: JournalLock = {
    path,
    release() {
      if (!held.delete(lock)) return;
      // A lock taken over meanwhile (this process was thought gone) is no longer this one's to remove.
      if (readText(path) === text) removeQuietly(path);
    },
  };
  held.add(lock);
  return lock;
}

/**
 * The holder a lock file names; `'gone'` when the file is gone (released meanwhile). A file that
 * names no holder is `'being taken'`, unless it has stayed so for {@link UNWRITTEN_MS}: then its
 * writer was killed between creating and writing it, and it reads as held by no process (pid 0).
 */
function holderOf(path: string): Holder | 'gone' | 'being taken' {
  const text = readText(path);
  if (text === undefined) return 'gone';
  const parsed = parseJson(text);
  const value = parsed.ok ? (parsed.value as Partial<Holder> | null) : null;
  if (value && Number.isSafeInteger(value.pid) && typeof value.host === 'string') {
    return { pid: value.pid as number, host: value.host, since: typeof value.since === 'string' ? value.since : 'an unknown time' };
  }
  let age = 0;
  try {
    age = Date.now() - statSync(path).mtimeMs;
  } catch {
    return 'gone';
  }
  return age > UNWRITTEN_MS ? { pid: 0, host: hostname(), since: 'an unknown time' } : 'being taken';
}

/** True when the holder's process is gone from this host; a holder on another host cannot be checked, so it is never stale. */
function isStale(holder: Holder): boolean {
  if (holder.host !== hostname()) return false;
  if (holder.pid <= 0) return true;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists, owned by another user.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Removes a stale lock, if it is still the one judged stale; false when another writer is doing so
 * at this moment. Writers finding one stale lock at once
 * would otherwise each remove it, the later one removing the lock the earlier had just taken: the
 * removal is done under `<lock>.takeover`, itself taken with O_EXCL, by one writer at a time.
 */
function takeOver(path: string, stale: Holder): boolean {
  const guard = `${path}.takeover`;
  if (!create(guard, `${JSON.stringify({ pid: process.pid, host: hostname() })}\n`)) {
    // Another writer is taking over; one killed while doing so left its guard, which is cleared once old.
    try {
      if (Date.now() - statSync(guard).mtimeMs <= UNWRITTEN_MS) return false;
      removeQuietly(guard);
    } catch {
      // Gone already: the taker is done.
    }
    return true;
  }
  try {
    const now = holderOf(path);
    if (typeof now === 'object' && now.pid === stale.pid && now.host === stale.host && now.since === stale.since) removeQuietly(path);
  } finally {
    removeQuietly(guard);
  }
  return true;
}

/** The refusal of a lock another writer is taking at this very moment. */
function beingTaken(journal: string, path: string, why: string): UsageError {
  return new UsageError(`The journal ${journal} is being locked by another run just now (${why}): one run at a time may write a journal.`, {
    journal,
    lock: path,
  });
}

function refusal(journal: string, path: string, holder: Holder): UsageError {
  const where = holder.host === hostname() ? '' : ` on ${holder.host}`;
  return new UsageError(
    `The journal ${journal} is being written by process ${holder.pid}${where} (since ${holder.since}): one run at a time may write a journal. Wait for that run to end or stop it; if no such process is writing it, remove its lock ${path}.`,
    { journal, lock: path, pid: holder.pid, host: holder.host },
  );
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
