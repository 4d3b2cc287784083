/** Unit tests of early call delivery: a streamed call starts only when the answer so far is a valid prefix of a Solution (LOOP-11). */
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/protocol/model.js';
import { StreamedCalls, emitCalls } from '../../src/models/stream-calls.js';
import { solutionSchema } from './support/solution-schema.js';

function collect(): { request: ModelRequest; delivered: Array<[unknown, number]> } {
  const delivered: Array<[unknown, number]> = [];
  const request: ModelRequest = {
    requestName: 'composer',
    step: 0,
    messages: [],
    schema: solutionSchema,
    config: {},
    onCall: (call, index) => delivered.push([call, index]),
  };
  return { request, delivered };
}

/** Streams `text` one character at a time and returns what was delivered before the answer ended. */
function stream(text: string): Array<[unknown, number]> {
  const { request, delivered } = collect();
  const calls = new StreamedCalls(request);
  for (const char of text) calls.push(char);
  return delivered;
}

const synth = { _tool: 'synth', sound: 'piano' };
const mix = { _tool: 'mix', tracks: ['a'] };

describe('StreamedCalls', () => {
  it('delivers each valid call as soon as it is complete, after a preamble too', () => {
    expect(stream(`Here you go: {"calls": [${JSON.stringify(synth)}, ${JSON.stringify(mix)}`)).toEqual([
      [synth, 0],
      [mix, 1],
    ]);
  });

  it('holds back a call that fails its tool schema, and every call after it', () => {
    const bad = { _tool: 'synth' };
    expect(stream(`{"calls": [${JSON.stringify(synth)}, ${JSON.stringify(bad)}, ${JSON.stringify(mix)}], "output": null}`)).toEqual([[synth, 0]]);
  });

  it("holds back calls, streamed and final, while the answer breaks the request's rules beyond the schema (MSG-21, ADV-5)", () => {
    const { request, delivered } = collect();
    // A rule like the advisors': an opinion must be written before any call.
    const ruled: ModelRequest = { ...request, check: (answer) => (answer.opinion === 'given' ? [] : ['The opinion is missing.']) };
    const schema = solutionSchema as { properties: Record<string, unknown> };
    ruled.schema = { ...schema, properties: { opinion: { type: 'string' }, ...schema.properties } };
    const without = new StreamedCalls(ruled);
    for (const char of `{"calls": [${JSON.stringify(synth)}, ${JSON.stringify(mix)}]`) without.push(char);
    without.finish({ calls: [synth, mix], output: null });
    expect(delivered).toEqual([]);
    const first = new StreamedCalls(ruled);
    for (const char of `{"opinion": "given", "calls": [${JSON.stringify(synth)}, ${JSON.stringify(mix)}]`) first.push(char);
    expect(delivered).toEqual([
      [synth, 0],
      [mix, 1],
    ]);
  });

  it('holds back every call after an element that is not JSON, the first included (that answer can never be valid)', () => {
    const broken = '{"_tool": "synth", "sound": "piano",}';
    expect(stream(`{"calls": [${broken}, ${JSON.stringify(mix)}], "output": null}`)).toEqual([]);
    expect(stream(`{"calls": [${JSON.stringify(synth)}, ${broken}, ${JSON.stringify(mix)}], "output": null}`)).toEqual([[synth, 0]]);
  });

  it('holds back a call of a tool the schema does not offer', () => {
    expect(stream('{"calls": [{"_tool": "delete_everything"}]')).toEqual([]);
  });

  it('holds back calls after a property that is already invalid, or one the schema does not know', () => {
    expect(stream(`{"output": 42, "calls": [${JSON.stringify(synth)}]`)).toEqual([]);
    expect(stream(`{"mood": "x", "calls": [${JSON.stringify(synth)}]`)).toEqual([]);
    expect(stream(`{"output": null, "calls": [${JSON.stringify(synth)}]`)).toEqual([[synth, 0]]);
  });

  it('delivers at the end the calls not delivered yet, only when the whole answer is valid', () => {
    const valid = collect();
    const calls = new StreamedCalls(valid.request);
    calls.push(`{"calls": [${JSON.stringify(synth)}, `);
    calls.finish({ calls: [synth, mix], output: null });
    expect(valid.delivered).toEqual([
      [synth, 0],
      [mix, 1],
    ]);
    expect(calls.count).toBe(2);

    const invalid = collect();
    emitCalls({ calls: [synth, mix], output: 42 }, invalid.request);
    expect(invalid.delivered).toEqual([]);
  });

  it('maps the answer before judging it (strict-mode nulls of optional properties)', () => {
    const { request, delivered } = collect();
    const dropNulls = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (_, item) => (item === null ? undefined : item)));
    const calls = new StreamedCalls(request, dropNulls);
    calls.push('{"calls": [{"_tool": "synth", "sound": "piano", "_outputPath": null}');
    expect(delivered).toEqual([[synth, 0]]);
  });

  it('delivers every call of a 10,000-call answer as it arrives, each judged once (the old whole-prefix check took 35 s here)', () => {
    const { request, delivered } = collect();
    const calls = new StreamedCalls(request);
    const text = JSON.stringify({ calls: Array.from({ length: 10_000 }, () => synth), output: null });
    for (let at = 0; at < text.length; at += 64) calls.push(text.slice(at, at + 64));
    expect(delivered).toHaveLength(10_000);
    expect(delivered.at(-1)).toEqual([synth, 9_999]);
  });

  it('holds back a later call past the calls maximum of a Request without tools', () => {
    const { request, delivered } = collect();
    const calls = new StreamedCalls({ ...request, schema: { type: 'object', properties: { calls: { type: 'array', maxItems: 1 }, output: {} } } });
    calls.push(`{"calls": [${JSON.stringify(synth)}, ${JSON.stringify(mix)}]`);
    expect(delivered).toEqual([[synth, 0]]);
  });
});
