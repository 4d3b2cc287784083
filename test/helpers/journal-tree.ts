// A small journaled run tree for the journal tests: a top run delegating to two helpers in parallel, an Activity that counts its executions, and an in-memory journal store.
import { answered } from './step-model.js';
import { createRuntime, type DelegatingRuntime } from '../../src/create-runtime.js';
import type { JournalStore } from '../../src/protocol/trace/journal.js';
import type { Model, ModelRequest, ModelResponse } from '../../src/protocol/model.js';
import type { Activity } from '../../src/protocol/contracts.js';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';
import type { RequestDocument } from '../../src/protocol/types.js';

/** A journal held in memory: what it held when opened, and what was appended since. */
export function memoryJournal(events: readonly TraceEvent[] = [], ignored?: string): JournalStore & { appended: TraceEvent[] } {
  const appended: TraceEvent[] = [];
  return {
    location: 'memory.jsonl',
    events: structuredClone([...events]),
    ...(ignored === undefined ? {} : { ignored }),
    appended,
    append: (event) => {
      appended.push(structuredClone(event));
    },
    close: () => undefined,
    error: undefined,
  };
}

/** The helper both of the boss's research calls delegate to: it notes its topic, then reports it. */
export const HELPER: RequestDocument = {
  meta: { name: 'helper' },
  context: [
    { type: 'system', text: 'Research the topic, noting it first.' },
    { type: 'input', schema: { type: 'object', properties: { topic: { type: 'string' } } } },
    { type: 'tool', tool: { note: { type: 'object', properties: { text: { type: 'string' } }, _output: { type: 'string' } } } },
  ],
  schema: { type: 'string' },
} as RequestDocument;

/** The top run: two research delegations in parallel and a note of its own, then its output. */
export const BOSS: RequestDocument = {
  meta: { name: 'boss' },
  context: [
    { type: 'system', text: 'Research two topics in parallel, then summarise.' },
    {
      type: 'tool',
      tool: {
        research: { type: 'object', properties: { topic: { type: 'string' }, _delegate: { const: 'Helper' } } },
        note: { type: 'object', properties: { text: { type: 'string' } }, _output: { type: 'string' } },
      },
    },
  ],
  schema: { type: 'string' },
} as RequestDocument;

/** Answers by request name and step; the helper's answers depend on the topic its prompt names. Records every request. */
export class TreeScript implements Model {
  readonly id = 'scripted:journal';
  readonly requests: ModelRequest[] = [];

  async generate(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const prompt = request.messages.map((message) => message.content).join('\n');
    const topic = /"topic":\s*"([^"]+)"/.exec(prompt)?.[1] ?? 'none';
    const solution =
      request.requestName === 'boss'
        ? request.step === 0
          ? {
              calls: [
                { _tool: 'research', topic: 'tides', _outputPath: '†state.tides' },
                { _tool: 'research', topic: 'winds', _outputPath: '†state.winds' },
                { _tool: 'note', text: 'boss', _outputPath: '†state.noted' },
              ],
              output: null,
            }
          : { calls: [], output: `summary of ${/found tides/.test(prompt) ? 'tides' : '?'} and ${/found winds/.test(prompt) ? 'winds' : '?'}` }
        : request.step === 0
          ? { calls: [{ _tool: 'note', text: topic, _outputPath: '†state.noted' }], output: null }
          : { calls: [], output: `found ${topic}` };
    // A tick between answers lets parallel children interleave as live ones do.
    await new Promise((resolve) => setImmediate(resolve));
    return answered(solution, this.id, { inputTokens: 10, outputTokens: 3 }, 0.001);
  }
}

/** A runtime for the tree whose `note` Activity appends its text to `log` per execution. */
export function journalRuntime(log: string[], options: { idempotent?: boolean } = {}): DelegatingRuntime {
  const note: Activity = Object.assign(
    async (call: { text?: unknown }) => {
      log.push(String(call.text));
      return `noted ${String(call.text)}`;
    },
    options.idempotent === undefined ? {} : { idempotent: options.idempotent },
  );
  return createRuntime({ root: process.cwd(), delegates: { Helper: HELPER }, activities: { note } });
}
