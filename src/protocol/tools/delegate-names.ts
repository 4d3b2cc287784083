/** Delegates by name (DEL-21): the syntax that tells a name from a path or URL, and the checks of a document's `config.delegates`. */
import type { MessageProblem } from '../errors.js';
import { pointer } from '../json.js';
import { isJsonObject } from '../types.js';

/**
 * A delegate name: 1 to 64 letters, digits, `_` or `-` — the characters of a tool name. It has no
 * dot, slash, colon or `#`, so it is never a file reference (those end in `.json`), a URL (those
 * have a scheme) or a pinned reference.
 */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The reference the anonymous resolver owns (DEL-6); it is never a name. */
const ANONYMOUS = 'anonymous';

/** True when a `_delegate` reference is a name, resolved through the named registries (DEL-21). */
export function isDelegateName(reference: string): boolean {
  return NAME.test(reference) && reference !== ANONYMOUS;
}

/** The problem of a name a registry would hold, or undefined when it is a name. */
export function delegateNameProblem(name: string): string | undefined {
  if (name === ANONYMOUS) return 'Expected a delegate name other than "anonymous", which builds a delegate from the calling tool (DEL-6).';
  if (!NAME.test(name)) return `Expected a delegate name of 1 to 64 letters, digits, "_" or "-" (no dot, slash or colon), got ${JSON.stringify(name)}.`;
  return undefined;
}

/**
 * The problem of what a name stands for, or undefined when it is a relative path to a `.json`
 * file or an absolute `http(s)` URL (either may carry an integrity pin, DEL-7). Another name, or
 * `anonymous`, is refused: names never chain. Where the path leads (the root, DEL-4) and whether
 * the URL's host is allowed (DEL-5) are judged when the name is resolved.
 */
export function delegateTargetProblem(target: unknown): string | undefined {
  const expected = 'Expected a relative path to a .json file (such as "./summarizer.json") or an http(s) URL';
  if (typeof target !== 'string' || target === '') return `${expected}, got ${JSON.stringify(target)}.`;
  if (isDelegateName(target) || target === ANONYMOUS)
    return `${expected}, got ${JSON.stringify(target)}: a name stands for a document, never for another name.`;
  if (/^https?:\/\//i.test(target)) {
    return URL.canParse(target) ? undefined : `${expected}; ${JSON.stringify(target)} is not a URL.`;
  }
  if (/^[a-z][a-z0-9+.-]+:/i.test(target)) return `${expected}; the scheme of ${JSON.stringify(target)} is not understood.`;
  const path = target.replace(/#.*$/, '');
  if (!path.endsWith('.json')) return `${expected}; ${JSON.stringify(target)} does not end in .json.`;
  if (path.startsWith('/') || /^[a-z]:/i.test(path)) return `${expected}; ${JSON.stringify(target)} is absolute, and paths are relative to the document.`;
  if (/[\\%\0]/.test(path)) return `${expected}; ${JSON.stringify(target)} holds a backslash, "%" or a NUL byte.`;
  return undefined;
}

/** The problems of a document's `config.delegates` (DEL-21), each at its pointer below `/config/delegates`. */
export function delegateRegistryProblems(delegates: unknown): MessageProblem[] {
  if (!isJsonObject(delegates)) return [];
  const problems: MessageProblem[] = [];
  for (const [name, target] of Object.entries(delegates)) {
    const at = pointer('config', 'delegates', name);
    const problem = delegateNameProblem(name) ?? delegateTargetProblem(target);
    if (problem) problems.push({ pointer: at, message: problem });
  }
  return problems;
}
