/** Runs with a state that holds only its schema (MSG-19, act 012's schema-guided planning): it guides, holds no value, and writes fill it (DATA-10). */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { ContextStore } from '../../src/protocol/context/context-store.js';
import { parseReference } from '../../src/protocol/variables/references.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink, type TraceEvent } from '../../src/protocol/trace/trace.js';

const stateSchema = {
  type: 'object',
  properties: { language: { type: 'string' }, isEnglish: { type: 'boolean' }, translatedText: { type: 'string' } },
};

/** Act 012's example: three latent tools, the text as input, and a state holding only its schema. */
const document = {
  meta: { name: 'translate' },
  context: [
    {
      type: 'tool',
      tool: {
        detectLanguage: { properties: { text: { type: 'string' } }, _output: { type: 'string' } },
        isEnglish: { properties: { language: { type: 'string' } }, _output: { type: 'boolean' } },
        translateText: { properties: { text: { type: 'string' }, isEnglish: { type: 'boolean' } }, _output: { type: 'string' } },
        note: { properties: { text: { type: 'string' } } },
      },
    },
    { type: 'input', text: 'Bonjour le monde' },
    { type: 'state', schema: stateSchema },
  ],
  schema: { type: 'string' },
};

function traced() {
  const sink = memorySink();
  return { tracer: new Tracer([sink]), events: sink.events };
}

/** The prompt of one model step, as text. */
function prompt(events: TraceEvent[], step: number): string {
  const request = events.filter((event) => event.event === 'model.request')[step];
  return ((request?.messages ?? []) as { content: string }[]).map((message) => message.content).join('\n');
}

describe('a state holding only its schema (MSG-19)', () => {
  it("guides the plan: the model sees the slots to wire, then the values its calls wrote beside the schema (act 012's example)", async () => {
    const model = new ReplayModel([
      {
        match: { step: 0 },
        solution: {
          calls: [
            { _tool: 'detectLanguage', text: '†input.text', _outputPath: '†state.language', _output: 'fr' },
            { _tool: 'isEnglish', language: '†state.language', _outputPath: '†state.isEnglish', _output: false },
            { _tool: 'translateText', text: '†input.text', isEnglish: '†state.isEnglish', _outputPath: '†state.translatedText', _output: 'Hello world' },
          ],
          output: null,
        },
      },
      { match: { step: 1 }, solution: { calls: [], output: 'Hello world' } },
    ]);
    const { tracer, events } = traced();
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(document), { model, tracer });
    expect(result.ok && result.output).toBe('Hello world');
    const first = prompt(events, 0);
    expect(first).toContain('Nothing is written to state yet.');
    expect(first).toContain('Its slots: †state.language, †state.isEnglish, †state.translatedText');
    const second = prompt(events, 1);
    expect(second).not.toContain('Nothing is written to state yet.');
    expect(second).toContain(JSON.stringify({ language: 'fr', isEnglish: false, translatedText: 'Hello world' }));
    expect(second).toContain(`Schema of state:\n${JSON.stringify(stateSchema)}`);
    expect(events.filter((event) => event.event === 'call.failed')).toEqual([]);
  });

  it('gives reads of the state nothing: not {} and never the schema', () => {
    const runtime = new Runtime();
    const store = new ContextStore(runtime.validate(document).document.context, runtime.handlers);
    for (const text of ['†state', '†state.language', '†state.type', '†state.properties']) {
      expect(store.read(parseReference(text)!, undefined)).toEqual({ found: false });
    }
    expect(store.view('state', undefined)).toEqual({ found: false });
  });

  it('leaves a planned call reading it blocked, then unresolved, until something is written (VAR-5)', async () => {
    const planned = {
      ...document,
      context: [...document.context, { type: 'plan', calls: [{ _tool: 'note', text: '†state', _output: 'x', _outputPath: '†output' }] }],
    };
    const model = new ReplayModel([{ match: { step: 0 }, solution: { calls: [], output: 'done' } }]);
    const { tracer, events } = traced();
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(planned), { model, tracer });
    expect(result.ok && result.output).toBe('done');
    const failed = events.find((event) => event.event === 'call.failed');
    expect(failed?.error).toMatchObject({ code: 'unresolved_reference' });
    expect(JSON.stringify(failed)).toContain('†state');
    expect(events.some((event) => event.event === 'call.started')).toBe(false);
  });

  it('records a write that does not follow the schema, which only guides (DATA-10), and shows it beside the schema', async () => {
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: [{ _tool: 'note', text: 'x', _outputPath: '†state.language', _output: 42 }], output: null } },
      { match: { step: 1, contains: '"language":42' }, solution: { calls: [], output: 'noted' } },
    ]);
    const { tracer, events } = traced();
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(document), { model, tracer });
    expect(result.ok && result.output).toBe('noted');
    expect(events.filter((event) => event.event === 'call.failed')).toEqual([]);
    expect(prompt(events, 1)).toContain('Schema of state:');
  });
});
