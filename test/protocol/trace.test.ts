/** Unit tests of src/protocol/trace/trace.ts: common event fields (TRACE-1), listeners, events that are not JSON (TRACE-13). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/protocol/json-data.js';
import { RunTrace, type TraceEvent, Tracer, memorySink, traceLine } from '../../src/protocol/trace/trace.js';

const event = (name: string): TraceEvent => ({ ts: new Date(0).toISOString(), event: name, run: 'run_1', parent: null, depth: 0 });
const started = { request: '/requests/a.json', name: 'a', model: null, input: null };

describe('RunTrace (TRACE-1)', () => {
  it('gives every event ts, event, run, parent and depth, plus its own fields', () => {
    const sink = memorySink();
    const trace = new RunTrace(new Tracer([sink]), 'run_child', 'run_parent', 1);
    const before = Date.now();
    trace.emit('call.started', { call: '0.0', tool: 'greet', params: {}, instance: null });
    const [emitted] = sink.events;
    expect(emitted).toMatchObject({ event: 'call.started', run: 'run_child', parent: 'run_parent', depth: 1, call: '0.0', tool: 'greet' });
    expect(new Date(emitted!.ts).toISOString()).toBe(emitted!.ts);
    expect(Date.parse(emitted!.ts)).toBeGreaterThanOrEqual(before - 1000);
  });

  describe('the time of an event', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('is the clock of the moment it is emitted, to the millisecond, whether or not the last event had the same millisecond', () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const sink = memorySink();
      const trace = new RunTrace(new Tracer([sink]), 'run_1', null, 0);
      const times = [
        Date.UTC(2026, 0, 2, 3, 4, 5, 6),
        Date.UTC(2026, 0, 2, 3, 4, 5, 6),
        Date.UTC(2026, 0, 2, 3, 4, 5, 7),
        Date.UTC(2025, 11, 31, 23, 59, 59, 999),
      ];
      for (const time of times) {
        vi.setSystemTime(time);
        trace.emit('tick', {});
      }
      expect(sink.events.map((emitted) => emitted.ts)).toEqual(times.map((time) => new Date(time).toISOString()));
    });
  });

  it('gives the top run a null parent and depth 0', () => {
    const sink = memorySink();
    new RunTrace(new Tracer([sink]), 'run_top', null, 0).emit('run.started', started);
    expect(sink.events[0]).toMatchObject({ event: 'run.started', run: 'run_top', parent: null, depth: 0 });
  });

  it('keeps the common fields bound to its run: fields of the same name (from an Activity, say) never override them', () => {
    const sink = memorySink();
    new RunTrace(new Tracer([sink]), 'run_1', null, 0).emit('x', { event: 'y', run: 'run_other', parent: 'run_p', depth: 7, ts: 'yesterday', kept: true });
    expect(sink.events[0]).toMatchObject({ event: 'x', run: 'run_1', parent: null, depth: 0, kept: true });
    expect(sink.events[0]?.ts).not.toBe('yesterday');
  });

  it('shares one Tracer between a run and its children: both reach the same listeners, in order', () => {
    const sink = memorySink();
    const tracer = new Tracer([sink]);
    new RunTrace(tracer, 'run_parent', null, 0).emit('delegate.started', {
      call: '0.0',
      child: 'run_child',
      delegate: '/requests/a.json',
      reference: './a.json',
      registry: null,
      name: 'a',
      resolution: 'runtime',
      scopes: [],
      model: null,
      tier: null,
    });
    new RunTrace(tracer, 'run_child', 'run_parent', 1).emit('run.started', started);
    expect(sink.events.map((item) => `${item.run} ${item.event}`)).toEqual(['run_parent delegate.started', 'run_child run.started']);
  });
});

describe('Tracer', () => {
  it('sends each event to every listener', () => {
    const first = memorySink();
    const second = memorySink();
    const tracer = new Tracer([first]);
    tracer.subscribe(second);
    tracer.emit(event('run.started'));
    expect(first.events).toHaveLength(1);
    expect(second.events).toHaveLength(1);
  });

  it('stops sending to a listener once it unsubscribes', () => {
    const sink = memorySink();
    const tracer = new Tracer();
    const unsubscribe = tracer.subscribe(sink);
    tracer.emit(event('a'));
    unsubscribe();
    tracer.emit(event('b'));
    expect(sink.events.map((item) => item.event)).toEqual(['a']);
  });

  it('never lets a failing listener break emit or keep events from the others', () => {
    const sink = memorySink();
    const tracer = new Tracer([
      () => {
        throw new Error('observer bug');
      },
      sink,
    ]);
    expect(() => tracer.emit(event('run.started'))).not.toThrow();
    expect(() =>
      new RunTrace(tracer, 'run_1', null, 0).emit('run.failed', { code: 'model_error', message: 'No.', error: { code: 'model_error', message: 'No.' } }),
    ).not.toThrow();
    expect(sink.events.map((item) => item.event)).toEqual(['run.started', 'run.failed']);
  });
});

describe('memorySink', () => {
  it('keeps the events it receives, in order', () => {
    const sink = memorySink();
    sink(event('a'));
    sink(event('b'));
    expect(sink.events.map((item) => item.event)).toEqual(['a', 'b']);
  });
});

describe('traceLine (TRACE-13)', () => {
  it('writes an ordinary event as JSON.stringify does', () => {
    expect(traceLine(event('run.started'))).toBe(`${JSON.stringify(event('run.started'))}\n`);
  });

  it('still writes an event holding what JSON cannot: placeholders where it was, and a traceNote naming where', () => {
    let deep: unknown = 'bottom';
    for (let level = 0; level < 20_000; level++) deep = [deep];
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const line = traceLine({ ...event('run.started'), input: { deep, big: 10n, circular } });
    expect(line.endsWith('\n')).toBe(true);
    const written = JSON.parse(line) as Record<string, unknown> & { input: Record<string, unknown> };
    expect(written).toMatchObject({ event: 'run.started', run: 'run_1', parent: null, depth: 0 });
    expect(written.input.big).toBe('[not JSON: a BigInt (10n)]');
    expect(written.input.circular).toEqual({ self: '[not JSON: a circular reference (an object that contains itself)]' });
    expect(JSON.stringify(written.input.deep)).toContain(`[not JSON: nested deeper than ${MAX_JSON_DEPTH} levels]`);
    expect(written.traceNote).toContain('/input/big is a BigInt');
    expect(written.traceNote).toContain('/input/circular/self is a circular reference');
    expect(written.traceNote).toContain('/input/deep/0/0');
  });

  it('counts rather than lists a great many replaced parts', () => {
    const written = JSON.parse(traceLine({ ...event('x'), values: Array.from({ length: 25 }, (_, index) => BigInt(index)) })) as { traceNote: string };
    expect(written.traceNote).toContain('and 15 more');
  });
});
