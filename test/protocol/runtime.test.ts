/** The Runtime (src/protocol/run/runtime.ts): what it reads and opens, what it checks before a run, its preparers and tree-end hooks. */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import type { LoadedRequest } from '../../src/protocol/messages/load-request.js';
import { CONSULT_ACTIVITY } from '../../src/protocol/messages/advisors.js';
import { InputError, UsageError } from '../../src/protocol/errors.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { JournalStore } from '../../src/protocol/trace/journal.js';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';

/** A Request asking for `{ word: string }` whose answer is the model's output. */
const WORD_DOCUMENT = {
  meta: { name: 'word' },
  context: [
    { type: 'system', text: 'You answer.' },
    {
      type: 'input',
      schema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'], additionalProperties: false },
    },
  ],
  schema: { type: 'string' },
};

/** A model answering every step with `output`. */
const answering = (output: string) => new ReplayModel([{ match: {}, solution: { calls: [], output }, repeat: true }]);

/** A journal held in memory that says whether it was closed. */
function memoryStore(location: string): JournalStore & { closed: boolean; written: TraceEvent[] } {
  const written: TraceEvent[] = [];
  return {
    location,
    events: [],
    error: undefined,
    written,
    closed: false,
    append(event) {
      written.push(event);
    },
    close() {
      this.closed = true;
    },
  };
}

describe('the Runtime', () => {
  it('loads a file only through the reader it was given, and says how to load without one', async () => {
    const bare = new Runtime();
    await expect(bare.load('requests/word.json')).rejects.toThrow(UsageError);
    await expect(bare.load('requests/word.json')).rejects.toThrow(/Cannot load requests\/word\.json: this Runtime reads no files.*runtime\.parse/);

    const asked: string[] = [];
    const reading = new Runtime({
      readRequestFile: async (path) => {
        asked.push(path);
        return JSON.stringify(WORD_DOCUMENT);
      },
    });
    const loaded = await reading.load('requests/word.json');
    expect(asked).toEqual(['requests/word.json']);
    expect(loaded.location).toBe('requests/word.json');
    expect(loaded.document.meta?.name).toBe('word');
  });

  it('refuses an input that does not match the input schema before the model is asked anything (DATA-11)', async () => {
    const runtime = new Runtime();
    const model = answering('never');
    const run = runtime.run(runtime.validate(WORD_DOCUMENT, 'word.json'), { model, input: { word: 7, extra: true } });
    const error = await run.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    if (!(error instanceof InputError)) throw new Error(`expected an InputError, got ${String(error)}`);
    expect(error.code).toBe('invalid_input');
    expect(error.issues.map((issue) => issue.pointer).sort()).toEqual(['/extra', '/word']);
    expect(error.message).toContain('"word" (word.json)');
    expect(model.requests).toEqual([]);
  });

  it('runs a plain document as if validated at inline.json, and throws for an invalid one', async () => {
    const runtime = new Runtime();
    const result = await runtime.run(WORD_DOCUMENT, { model: answering('ok'), input: { word: 'hi' } });
    expect(result.ok && result.output).toBe('ok');
    await expect(runtime.run({ context: 'not a list' } as never)).rejects.toThrow(/inline\.json/);
  });

  it('runs its preparers in registration order on every document before its run starts', async () => {
    const seen: string[] = [];
    const rename =
      (suffix: string) =>
      (request: LoadedRequest, _options: unknown, runtime: Runtime): LoadedRequest => {
        seen.push(`${request.name}${suffix}`);
        expect(runtime).toBe(given);
        return { ...request, name: `${request.name}${suffix}` };
      };
    const given: Runtime = new Runtime({ preparers: [rename('+a')] });
    given.registerPreparer(rename('+b'));
    const result = await given.run(given.validate(WORD_DOCUMENT), { model: answering('ok'), input: { word: 'hi' } });
    expect(result.ok).toBe(true);
    expect(seen).toEqual(['word+a', 'word+a+b']);
    expect(given.preparers).toHaveLength(2);
  });

  it('tells its tree-end hooks, in order, once the top run ended, and skips a hook that fails (LOOP-19)', async () => {
    const told: string[] = [];
    const runtime = new Runtime()
      .onTreeEnd((tree) => {
        told.push(`first ${tree}`);
      })
      .onTreeEnd(() => {
        throw new Error('cannot release');
      })
      .onTreeEnd(async (tree) => {
        told.push(`third ${tree}`);
      });
    const result = await runtime.run(runtime.validate(WORD_DOCUMENT), { model: answering('ok'), input: { word: 'hi' } });
    expect(result.ok).toBe(true);
    expect(told).toEqual([`first ${result.run}`, `third ${result.run}`]);
  });

  it('opens a journal given by location through its opener and closes it, but leaves a given store open (JOURNAL-1)', async () => {
    const bare = new Runtime();
    await expect(bare.run(bare.validate(WORD_DOCUMENT), { model: answering('ok'), input: { word: 'hi' }, journal: 'run.jsonl' })).rejects.toThrow(
      /Cannot open the journal run\.jsonl: this Runtime writes no files/,
    );

    const opened: { location: string; mode: string; store: ReturnType<typeof memoryStore> }[] = [];
    const runtime = new Runtime({
      openJournal: (location, mode) => {
        const store = memoryStore(location);
        opened.push({ location, mode, store });
        return store;
      },
    });
    const byLocation = await runtime.run(runtime.validate(WORD_DOCUMENT), { model: answering('ok'), input: { word: 'hi' }, journal: 'run.jsonl' });
    expect(byLocation.ok).toBe(true);
    expect(opened.map(({ location, mode }) => [location, mode])).toEqual([['run.jsonl', 'create']]);
    expect(opened[0]?.store.closed).toBe(true);
    expect(opened[0]?.store.written.map((event) => event.event)).toContain('journal.started');

    const given = memoryStore('given.jsonl');
    await runtime.run(runtime.validate(WORD_DOCUMENT), { model: answering('ok'), input: { word: 'hi' }, journal: given });
    expect(given.closed).toBe(false);
    expect(given.written.at(-1)?.event).toBe('run.completed');
  });

  it('registers the consult Activity itself (ADV-8), and lets a registered Activity be replaced by name', () => {
    const runtime = new Runtime({ activities: { echo: () => 'first' } });
    expect(runtime.hasActivity('echo')).toBe(true);
    expect(runtime.hasActivity('nothing')).toBe(false);
    // The consult tool's Activity is built in, named with `@`, and may run for an untrusted document (ADV-8).
    expect(runtime.activities.registration(CONSULT_ACTIVITY)?.runsUntrusted).toBe(true);
    expect(runtime.activities.list()).toEqual(['echo']);
    runtime.registerActivity('echo', () => 'second');
    expect(runtime.activities.registration('echo')?.activity({ _tool: 'echo' }, {} as never, [], {} as never)).toBe('second');
  });
});
