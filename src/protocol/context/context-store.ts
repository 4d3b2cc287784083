/** The run's context with its data records kept beside it, indexed by kind, instance and path, so reads never rescan the messages. */
import { defaultHandlers } from '../messages/builtin-handlers.js';
import { dataIdentityOf, recordOf } from '../messages/data-messages.js';
import type { HandlerRegistry, ShownFields } from '../messages/handlers.js';
import { CallError } from '../errors.js';
import { MAX_NESTING_DEPTH, nestingProblem } from '../json.js';
import { collectTools } from '../tools/tools.js';
import { applyToolRules } from '../tools/tool-rules.js';
import type { ToolRule } from '../types.js';
import { isJsonObject, type JsonSchema, type Message, type ToolSchema } from '../types.js';
import { readRelated, stablePath, type DataRecord, type ReadResult } from '../variables/data-records.js';
import { formatReference, type PathSegment, type Reference } from '../variables/references.js';

/**
 * How deep the data of one kind may nest (DOC-10): a write of a value MAX_NESTING_DEPTH levels
 * deep at a path as long as references allow (and pushed into an array there) always fits;
 * writing values read from the data ever deeper does not.
 */
export const MAX_DATA_DEPTH = 2 * MAX_NESTING_DEPTH + 1;

/** A record and its place among all records of the store. */
interface Placed {
  position: number;
  record: DataRecord;
}

/** One path of a RecordTree: the records written at exactly this path. */
class PathNode {
  readonly records: Placed[] = [];
  /** The newest `set` at exactly this path. */
  lastSet: Placed | undefined;
  /** The position of the newest record at this path or below. */
  newest = -1;
  readonly children = new Map<string, PathNode>();
}

/** The records of one kind and one instance (or the global ones), by path. */
class RecordTree {
  private readonly root = new PathNode();

  add(placed: Placed): void {
    let node = this.root;
    node.newest = placed.position;
    for (const segment of placed.record.path) {
      const key = String(segment);
      let child = node.children.get(key);
      if (!child) {
        child = new PathNode();
        node.children.set(key, child);
      }
      child.newest = placed.position;
      node = child;
    }
    node.records.push(placed);
    if (placed.record.method === 'set') node.lastSet = placed;
  }

  /**
   * What a read of `stable` folds (VAR-15): the newest `set` at or above it, and every newer
   * record at, above or below it, oldest first. Visits only the nodes on its path and the
   * branches below it that hold newer records.
   */
  related(stable: readonly PathSegment[]): { base: Placed | undefined; after: Placed[] } {
    const along = [this.root];
    for (const segment of stable) {
      const child = along[along.length - 1]!.children.get(String(segment));
      if (!child) break;
      along.push(child);
    }
    let base: Placed | undefined;
    for (const node of along) if (node.lastSet && (!base || node.lastSet.position > base.position)) base = node.lastSet;
    const since = base?.position ?? -1;
    const after: Placed[] = [];
    const newer = (node: PathNode) => {
      for (let i = node.records.length - 1; i >= 0 && node.records[i]!.position > since; i -= 1) after.push(node.records[i]!);
    };
    for (const node of along) newer(node);
    if (along.length === stable.length + 1) {
      const below = [...along[along.length - 1]!.children.values()];
      for (let node = below.pop(); node !== undefined; node = below.pop()) {
        if (node.newest <= since) continue;
        newer(node);
        below.push(...node.children.values());
      }
    }
    after.sort((a, b) => a.position - b.position);
    return { base, after };
  }
}

/** The first message of one identity, and the newest `schema` and `description` of its messages, each with the position of its message. */
interface IdentityMessages {
  first: { at: number; value: Message };
  schema?: { at: number; value: JsonSchema };
  description?: { at: number; value: string };
}

/** The growing context of one run: messages in order, and the data records they hold. */
export class ContextStore {
  readonly messages: Message[] = [];
  readonly records: DataRecord[] = [];
  /** The tools defined so far, by tool messages and the messages that offer tools (MSG-22); a later definition of a name wins (and moves to the end). */
  readonly tools = new Map<string, ToolSchema>();
  /** Records by kind, then by instance (undefined = global). */
  private readonly trees = new Map<string, Map<string | undefined, RecordTree>>();
  private readonly counts = new Map<string, number>();
  /** How many messages name each instance, so that the instances are known without a scan of the context each step. */
  private readonly instanceCounts = new Map<string, number>();
  /** `instances()` as last answered; dropped when an instance comes or goes. */
  private sortedInstances: string[] | undefined;
  private readonly listeners = new Set<(record: DataRecord) => void>();
  /** Data-like messages by kind, then by instance (undefined: global), as far as showing a kind needs them (see `shownFields`). */
  private readonly kinds = new Map<string, Map<string | undefined, IdentityMessages>>();
  private appended = 0;

  /**
   * `handlers` say which messages are data and what each records (the built-in ones by default);
   * `builtinTools` are defined before the messages' tools, which may redefine them (DEL-24);
   * `toolRules` then forbid tools or set their approval (TOOL-21).
   */
  constructor(
    messages: readonly Message[] = [],
    readonly handlers: HandlerRegistry = defaultHandlers(),
    builtinTools: Readonly<Record<string, ToolSchema>> = {},
    /** The document's `config.toolRules` (TOOL-21), applied to every tool as it is defined. */
    private readonly toolRules: readonly ToolRule[] = [],
  ) {
    for (const [name, tool] of Object.entries(builtinTools)) this.tools.set(name, tool);
    applyToolRules(this.tools, toolRules);
    for (const message of messages) this.append(message);
  }

  /** Appends a message (never mutates an old one). */
  append(message: Message): void {
    const record = recordOf(message, this.handlers);
    if (record) checkDepth(record);
    this.messages.push(message);
    this.countInstance(message, 1);
    this.noteKind(message);
    collectTools([message], this.tools, this.handlers);
    applyToolRules(this.tools, this.toolRules);
    if (!record) return;
    const placed = { position: this.records.length, record };
    this.records.push(record);
    let byInstance = this.trees.get(record.kind);
    if (!byInstance) {
      byInstance = new Map();
      this.trees.set(record.kind, byInstance);
    }
    let tree = byInstance.get(record.instance);
    if (!tree) {
      tree = new RecordTree();
      byInstance.set(record.instance, tree);
    }
    tree.add(placed);
    this.counts.set(record.kind, (this.counts.get(record.kind) ?? 0) + 1);
    for (const listener of this.listeners) listener(record);
  }

  /**
   * Puts `next` where `previous` was (appends it when `previous` is gone), for messages that hold
   * neither data nor tools: a plan updated with its progress (PLAN-11).
   */
  replace(previous: Message, next: Message): void {
    if (recordOf(previous, this.handlers) || recordOf(next, this.handlers) || previous.type === 'tool' || next.type === 'tool')
      throw new TypeError('Only messages that hold neither data nor tools can be replaced.');
    const index = this.messages.indexOf(previous);
    if (index < 0) this.messages.push(next);
    else {
      this.countInstance(previous, -1);
      this.messages[index] = next;
    }
    this.countInstance(next, 1);
  }

  /** Removes the messages that `drop` picks among those that hold neither data nor tools (superseded plans, PLAN-11). */
  remove(drop: (message: Message) => boolean): void {
    let kept = 0;
    for (const message of this.messages) {
      // The cheap choice first: only what `drop` picks is looked at for data.
      if (drop(message) && message.type !== 'tool' && recordOf(message, this.handlers) === undefined) {
        this.countInstance(message, -1);
        continue;
      }
      this.messages[kept++] = message;
    }
    this.messages.length = kept;
  }

  /** Reads a reference for an instance (global data plus that instance's own). */
  read(reference: Reference, instance: string | undefined): ReadResult {
    return this.readPath(reference.kind, instance, reference.segments);
  }

  /** The whole merged value of a kind for an instance. */
  view(kind: string, instance: string | undefined): ReadResult {
    return this.readPath(kind, instance, []);
  }

  /** How many records of a kind were written, for every instance. */
  count(kind: string): number {
    return this.counts.get(kind) ?? 0;
  }

  /** Calls `listener` with every record appended from now on; returns the function that stops it. */
  watch(listener: (record: DataRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every instance name that occurs in the context (DATA-1), sorted: what `instanceNames` finds in `messages`, kept as they change. */
  instances(): string[] {
    this.sortedInstances ??= [...this.instanceCounts.keys()].sort();
    return [...this.sortedInstances];
  }

  /**
   * The fields that show a kind to `instance` (`latestFields` of the kind's messages it sees: the
   * global ones and its own), and the kind's first message, whose handler shows a kind no type
   * owns (`showKind`); undefined when no message holds the kind. Kept as messages arrive, so a
   * call's scopes never scan the context.
   */
  shownFields(kind: string, instance: string | undefined): { fields: ShownFields; first: Message } | undefined {
    const byInstance = this.kinds.get(kind);
    const global = byInstance?.get(undefined);
    const own = instance === undefined ? undefined : byInstance?.get(instance);
    const first = older(global?.first, own?.first);
    if (!first) return undefined;
    const schema = newer(global?.schema, own?.schema);
    const description = newer(global?.description, own?.description);
    const fields: ShownFields = {};
    if (schema) fields.schema = schema.value;
    if (description) fields.description = description.value;
    return { fields, first: first.value };
  }

  private noteKind(message: Message): void {
    const identity = dataIdentityOf(message, this.handlers);
    if (!identity) return;
    let byInstance = this.kinds.get(identity.kind);
    if (!byInstance) {
      byInstance = new Map();
      this.kinds.set(identity.kind, byInstance);
    }
    // Data-like messages are never removed or replaced, so the count of appends orders them.
    const at = this.appended++;
    let latest = byInstance.get(identity.instance);
    if (!latest) {
      latest = { first: { at, value: message } };
      byInstance.set(identity.instance, latest);
    }
    if (typeof message.schema === 'boolean' || isJsonObject(message.schema)) latest.schema = { at, value: message.schema };
    if (typeof message.description === 'string') latest.description = { at, value: message.description };
  }

  private countInstance(message: Message, change: 1 | -1): void {
    const name = message._instance;
    if (typeof name !== 'string') return;
    const count = (this.instanceCounts.get(name) ?? 0) + change;
    if (count > 0) this.instanceCounts.set(name, count);
    else this.instanceCounts.delete(name);
    if (count === 0 || (change === 1 && count === 1)) this.sortedInstances = undefined;
  }

  /** `readPath` of data-records.ts, over the indexed records: the same answer, from the related records only. */
  private readPath(kind: string, instance: string | undefined, path: readonly PathSegment[]): ReadResult {
    const stable = stablePath(path);
    const trees = this.trees.get(kind);
    const global = trees?.get(undefined)?.related(stable);
    const own = instance === undefined ? undefined : trees?.get(instance)?.related(stable);
    // An instance's own records come after every global one (DATA-3), so its own `set` wins.
    if (own?.base) return readRelated(own.base.record, records(own.after), path);
    return readRelated(global?.base?.record, [...records(global?.after ?? []), ...records(own?.after ?? [])], path);
  }
}

/**
 * Refuses a record that would make its kind's data nest deeper than MAX_DATA_DEPTH (DOC-10): each
 * segment of its path is a level, and so is the array a `push` adds to.
 */
function checkDepth(record: DataRecord): void {
  const above = record.path.length + (record.method === 'push' ? 1 : 0);
  const deep = nestingProblem(record.value, MAX_DATA_DEPTH - above);
  if (deep === undefined) return;
  const where = record.path.length === 0 ? `†${record.kind}` : formatReferenceSafely(record);
  throw new CallError(
    'invalid_params',
    `The value written to ${where} would nest the ${record.kind} data deeper than ${MAX_DATA_DEPTH} levels (at ${deep || '/'} of the value).`,
    { pointer: deep },
  );
}

function formatReferenceSafely(record: DataRecord): string {
  try {
    return formatReference(record.kind, record.path);
  } catch {
    return `†${record.kind} at ${JSON.stringify(record.path)}`;
  }
}

/** The newer of two noted fields. */
function newer<T extends { at: number }>(a: T | undefined, b: T | undefined): T | undefined {
  return a === undefined || (b !== undefined && b.at > a.at) ? b : a;
}

/** The older of two noted fields. */
function older<T extends { at: number }>(a: T | undefined, b: T | undefined): T | undefined {
  return a === undefined || (b !== undefined && b.at < a.at) ? b : a;
}

function records(placed: readonly Placed[]): DataRecord[] {
  return placed.map((entry) => entry.record);
}
