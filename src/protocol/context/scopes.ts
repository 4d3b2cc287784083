/** Scopes: the allow-list of parent context a latent hint, an Activity or a delegate may see. */
import { CallError } from '../errors.js';
import type { ContextStore } from './context-store.js';
import { showKind } from '../messages/data-messages.js';
import { formatIssues, validateAgainst } from '../schemas.js';
import { metaConst, metaSchema } from '../tools/tools.js';
import type { Call, Message, ToolSchema } from '../types.js';
import { parseReference } from '../variables/references.js';

/** Scope names for plain turns; everything else names a data kind (optionally narrowed by a path). */
const TURN_SCOPES: Record<string, (message: Message) => boolean> = {
  system: (message) => message.type === 'system' || (message.type === 'text' && message.role === 'system'),
  history: (message) => message.type === 'user' || message.type === 'assistant' || (message.type === 'text' && message.role !== 'system'),
  tool: (message) => message.type === 'tool',
};

/** Parses a scope (`state`, `state.user`, `history`); throws CallError for malformed ones. */
export function parseScope(scope: string): { kind: string; segments: (string | number)[]; path: string } {
  const reference = parseReference(`†${scope}`);
  if (!reference) throw new CallError('invalid_params', `Expected a scope such as "state", "state.user", "system" or "history", got "${scope}".`);
  return { kind: reference.kind, segments: reference.segments, path: reference.path };
}

/** A scope written as a reference (`†state.notes`) as a scope (`state.notes`); any other as it is (DEL-25). */
export function unsigiled(scope: string): string {
  return scope.startsWith('†') ? scope.slice(1) : scope;
}

/** Places `value` at `segments` inside a fresh container, so a narrowed scope keeps its shape. */
function nest(segments: (string | number)[], value: unknown): unknown {
  return segments.reduceRight<unknown>(
    (inner, segment) => (typeof segment === 'number' ? Object.assign([], { [segment]: inner }) : { [segment]: inner }),
    value,
  );
}

/**
 * The messages of `store` that `scopes` allow, seen from `instance`: plain turns by scope name,
 * data kinds as one merged message each (narrowed to the path when one is given). Nothing
 * unscoped is ever returned, and nothing of another instance.
 */
export function scopeContext(store: ContextStore, scopes: readonly string[] | undefined, instance: string | undefined): Message[] {
  if (!scopes || scopes.length === 0) return [];
  const selected: Message[] = [];
  for (const scope of scopes) {
    const turns = TURN_SCOPES[scope];
    if (turns) {
      selected.push(...store.messages.filter(turns));
      continue;
    }
    const { kind, segments } = parseScope(scope);
    const found = segments.length === 0 ? store.view(kind, instance) : store.read({ kind, segments, path: '', text: '' }, instance);
    const kindMessages = store.shownFields(kind, instance);
    if (!found.found || !kindMessages) continue;
    // A narrowed scope shows part of the kind, which its schema no longer describes.
    const { fields } = kindMessages;
    const { schema: _whole, ...narrowed } = fields;
    const shown = showKind(
      kind,
      { found: true, value: nest(segments, found.value) },
      segments.length === 0 ? fields : narrowed,
      [kindMessages.first],
      store.handlers,
    );
    if (shown) selected.push(shown);
  }
  return selected;
}

/**
 * Judges the `_scopes` a call carries before anything runs (SCOPE-10, SCOPE-11). On a latent call
 * whose tool declares no `_scopes` they are a focus hint: each must be a scope (SCOPE-1), and
 * nothing receives them. Otherwise they must be what the tool's `_scopes` schema admits: none when
 * it declares none, its value when it fixes one, within its schema when it is wider; a call asking
 * for more fails with `invalid_params` naming SCOPE-10, so no Activity or delegate ever receives
 * more than its tool allows. A latent call contradicting fixed scopes is left to TOOL-12.
 */
export function checkCallScopes(call: Call, tool: ToolSchema, latent: boolean): void {
  const asked = call._scopes as unknown;
  if (asked === undefined) return;
  const declared = metaSchema(tool, '_scopes');
  if (latent && declared === undefined) {
    if (!Array.isArray(asked) || !asked.every((scope) => typeof scope === 'string')) {
      throw new CallError('invalid_params', `The _scopes hint of "${call._tool}" must be a list of scopes such as ["input"] or ["state.user"].`, {
        toolName: call._tool,
      });
    }
    for (const scope of asked) parseScope(scope);
    return;
  }
  if (latent) return;
  const refuse = (why: string): never => {
    throw new CallError(
      'invalid_params',
      `The call to "${call._tool}" asks for _scopes ${JSON.stringify(asked)}, but ${why}: a call cannot widen what an Activity or delegate receives (spec/scopes.md SCOPE-10).`,
      { toolName: call._tool, rule: 'SCOPE-10' },
    );
  };
  if (declared === undefined) refuse('its tool declares no _scopes; leave _scopes out');
  const fixed = metaConst(tool, '_scopes');
  if (fixed !== undefined) {
    if (JSON.stringify(fixed) !== JSON.stringify(asked)) refuse(`its tool fixes them to ${JSON.stringify(fixed)}`);
    return;
  }
  const issues = validateAgainst(declared as ToolSchema, asked);
  if (issues.length > 0) refuse(`its tool's _scopes schema does not admit them (${formatIssues(issues)})`);
}
