/** Unit tests of src/protocol/messages/load-request.ts: every kind of document problem with its document and pointer (DOC-5), names (DOC-4). */
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { type Problem, RequestError } from '../../src/protocol/errors.js';
import { parseRequestText, requestName, validateRequest } from '../../src/protocol/messages/load-request.js';
import { MAX_NESTING_DEPTH } from '../../src/protocol/json.js';
import type { RequestDocument } from '../../src/protocol/types.js';

const LOCATION = '/requests/doc.json';

/** Validates a document and returns the problems it was refused with (failing the test when it loads). */
function problemsOf(document: unknown, handlers = defaultHandlers()): Problem[] {
  try {
    validateRequest(document, LOCATION, handlers);
  } catch (error) {
    expect(error).toBeInstanceOf(RequestError);
    const requestError = error as RequestError;
    expect(requestError.code).toBe('invalid_request');
    for (const problem of requestError.problems) expect(problem.document).toBe(LOCATION);
    return requestError.problems;
  }
  throw new Error('Expected the document to be refused, but it loaded.');
}

const pointersOf = (document: unknown) => problemsOf(document).map((problem) => problem.pointer);

describe('validateRequest: the top level (DOC-1, DOC-5 step 2)', () => {
  it('loads a minimal document and returns it with its location and name', () => {
    const loaded = validateRequest({ context: [], schema: true }, LOCATION, defaultHandlers());
    expect(loaded).toEqual({ document: { context: [], schema: true }, location: LOCATION, name: 'doc' });
  });

  it('reports a missing context and schema at the root and a wrong type at its pointer', () => {
    const problems = problemsOf({ context: 'not a list' });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pointer: '', message: expect.stringContaining('"schema"') }),
        expect.objectContaining({ pointer: '/context', message: 'Expected array.' }),
      ]),
    );
  });

  it('reports an unknown top-level field at its own pointer, naming it', () => {
    expect(problemsOf({ context: [], schema: true, extra: 1 })).toEqual([{ document: LOCATION, pointer: '/extra', message: 'Unexpected property "extra".' }]);
  });

  it('accepts $schema, meta with extra fields kept, and config keys a registered handler declares (DOC-2, DOC-3a)', () => {
    const document = { $schema: 'x', meta: { name: 'n', owner: 'me' }, config: { model: 'openai:x', custom: true }, context: [], schema: true };
    const loaded = validateRequest(document, LOCATION, defaultHandlers().register({ type: 'note', configKeys: ['custom'] }));
    expect(loaded.document.meta).toEqual({ name: 'n', owner: 'me' });
    expect(loaded.document.config).toEqual({ model: 'openai:x', custom: true });
  });

  it('refuses a config key nothing understands at its pointer, naming the nearest understood key (DOC-3a)', () => {
    const problems = problemsOf({ config: { maxStep: 3, model: 'openai:x', custom: true }, context: [], schema: true });
    expect(problems.map((problem) => problem.pointer)).toEqual(['/config/maxStep', '/config/custom']);
    expect(problems[0]?.message).toBe('Unknown config key "maxStep"; did you mean "maxSteps"?');
    expect(problems[1]?.message).toMatch(/^Unknown config key "custom"; the keys understood are model, tier, .*toolRules\.$/);
  });

  it('reports a message that is not an object at its index', () => {
    expect(pointersOf({ context: [{ role: 'user', content: 'hi' }, 5], schema: true })).toEqual(['/context/1']);
  });

  it('reports only top-level problems when the top level fails, hiding message problems', () => {
    expect(pointersOf({ context: [{ type: 'weird' }], schema: 'not a schema' })).toEqual(['/schema']);
  });

  it('gives chat-style messages their type before the top level requires one (MSG-2)', () => {
    const loaded = validateRequest({ context: [{ role: 'user', content: 'Hi.' }], schema: true }, LOCATION, defaultHandlers());
    expect(loaded.document.context).toEqual([{ type: 'user', text: 'Hi.' }]);
  });
});

describe('validateRequest: messages (MSG-1, DOC-5 step 3)', () => {
  it('reports an unknown message type at /context/<i>/type, listing the registered types', () => {
    const [problem, ...rest] = problemsOf({ context: [{ type: 'user', text: 'ok' }, { type: 'weird' }], schema: true });
    expect(rest).toEqual([]);
    expect(problem?.pointer).toBe('/context/1/type');
    expect(problem?.message).toContain('"weird"');
    expect(problem?.message).toContain('assistant, data, error, input, meta, plan, state, system, text, tool, toolset, user');
  });

  it('lists a custom registered type among the alternatives', () => {
    const handlers = defaultHandlers().register({ type: 'note' });
    const [problem] = problemsOf({ context: [{ type: 'weird' }], schema: true }, handlers);
    expect(problem?.message).toContain('meta, note, plan');
  });

  it('reports every bad message shape at its own pointer, together with a bad output schema', () => {
    const problems = problemsOf({
      context: [
        { type: 'data', kind: '1bad', data: 1 },
        { type: 'user' },
        { type: 'state' },
        { type: 'plan', mode: 'later' },
        { type: 'user', text: 'x', extra: 1 },
        { type: 'error', call: {}, error: { code: 'x' } },
      ],
      schema: { type: 'nope' },
    });
    expect(problems.map((problem) => problem.pointer)).toEqual([
      '/context/0/kind',
      '/context/1',
      '/context/2',
      '/context/3/mode',
      '/context/4/extra',
      '/context/5/error',
      '/schema',
    ]);
    expect(problems[1]?.message).toBe('Expected property "text" to be present.');
    expect(problems[2]?.message).toBe('Expected property "state" to be present.');
    expect(problems[4]?.message).toBe('Unexpected property "extra".');
    expect(problems[6]?.message).toMatch(/^Expected a valid JSON Schema: /);
  });

  it('reports a plan call that is not a call (CALL-1, PLAN-8) at the call field', () => {
    expect(pointersOf({ context: [{ type: 'plan', calls: [{ _tool: 'a', _outputPath: 'state.x' }, { x: 1 }] }], schema: true })).toEqual([
      '/context/0/calls/0/_outputPath',
      '/context/0/calls/1',
    ]);
  });

  it('reports a tool name that does not match TOOL-1 under the tool message', () => {
    const pointers = pointersOf({ context: [{ type: 'tool', tool: { 'bad name': {} } }], schema: true });
    expect(new Set(pointers)).toEqual(new Set(['/context/0/tool']));
  });

  it('refuses a tool named __proto__ as reserved, at its pointer, instead of dropping it (TOOL-1)', () => {
    // Parsed from text: in an object literal `__proto__` would set the prototype, not a key.
    const document = JSON.parse('{"context":[{"type":"system","text":"x"},{"type":"tool","tool":{"ok":{},"__proto__":{"description":"d"}}}],"schema":true}');
    const problems = problemsOf(document);
    expect(problems).toEqual([
      expect.objectContaining({
        pointer: '/context/1/tool/__proto__',
        message: expect.stringMatching(/^Expected a tool name other than "__proto__": the name is reserved/),
      }),
    ]);
  });

  it('refuses a tool parameter named __proto__ as reserved, at its pointer (TOOL-1)', () => {
    const document = JSON.parse('{"context":[{"type":"tool","tool":{"ask":{"properties":{"__proto__":{"type":"string"}}}}}],"schema":true}');
    expect(problemsOf(document)).toEqual([
      expect.objectContaining({
        pointer: '/context/0/tool/ask/properties/__proto__',
        message: expect.stringContaining('parameter name other than "__proto__"'),
      }),
    ]);
  });

  it('keeps constructor, prototype and toString as ordinary tool and parameter names (TOOL-1)', () => {
    const tool = { properties: { constructor: { type: 'string' } } };
    const loaded = validateRequest(
      { context: [{ type: 'tool', tool: { constructor: tool, prototype: {}, toString: {} } }], schema: true },
      LOCATION,
      defaultHandlers(),
    );
    const tools = (loaded.document.context[0] as { tool: Record<string, unknown> }).tool;
    expect(Object.keys(tools)).toEqual(['constructor', 'prototype', 'toString']);
    expect(tools.constructor).toEqual({ type: 'object', properties: { constructor: { type: 'string' } } });
  });

  it('reports a top-level _output that is not a schema where the document wrote it (TOOL-3, DOC-5)', () => {
    expect(pointersOf({ context: [{ type: 'tool', tool: { t: { _output: 5 } } }], schema: true })).toEqual(['/context/0/tool/t/_output']);
    expect(pointersOf({ context: [{ type: 'tool', tool: { t: { properties: { _output: 5 } } } }], schema: true })).toEqual([
      '/context/0/tool/t/properties/_output',
    ]);
  });

  it('names flat input fields and message shorthands where the document wrote them (DOC-5)', () => {
    expect(pointersOf({ context: [{ type: 'input', _instance: 5 }], schema: true })).toEqual(['/context/0/_instance']);
    expect(pointersOf({ context: [{ type: 'user', message: 5 }], schema: true })).toEqual(['/context/0/message']);
    expect(pointersOf({ context: [{ type: 'tool', tool: { t: { _delegate: 5 } } }], schema: true })).toEqual(['/context/0/tool/t/_delegate']);
  });

  it('validates a custom message type against its handler schema, with the handler shorthand applied first', () => {
    const handlers = defaultHandlers().register({
      type: 'note',
      schema: { type: 'object', required: ['type', 'note'], properties: { type: { const: 'note' }, note: { type: 'string' } }, additionalProperties: false },
      normalize: (message) => ('note' in message ? message : { type: 'note', note: message.text }) as never,
    });
    const loaded = validateRequest({ context: [{ type: 'note', text: 'hello' }], schema: true }, LOCATION, handlers);
    expect(loaded.document.context).toEqual([{ type: 'note', note: 'hello' }]);
    expect(problemsOf({ context: [{ type: 'note', note: 5 }], schema: true }, handlers).map((problem) => problem.pointer)).toEqual(['/context/0/note']);
  });

  it('returns every message in its canonical form (DOC-8)', () => {
    const loaded = validateRequest(
      {
        context: [
          { type: 'system', content: 'Be brief.' },
          { type: 'state', count: 1 },
          { type: 'tool', tool: { t: { _delegate: './t.json' } } },
          { type: 'plan' },
        ],
        schema: true,
      },
      LOCATION,
      defaultHandlers(),
    );
    expect(loaded.document.context).toEqual([
      { type: 'system', text: 'Be brief.' },
      { type: 'state', state: { count: 1 } },
      { type: 'tool', tool: { t: { type: 'object', properties: { _delegate: { const: './t.json' } } } } },
      { type: 'plan', mode: 'eager', calls: [] },
    ]);
  });
});

describe('validateRequest: semantic checks (DOC-5 step 4)', () => {
  it('reports a tool schema that does not compile at the tool', () => {
    const problems = problemsOf({ context: [{ type: 'tool', tool: { t: { properties: { x: { type: 'nope' } } } } }], schema: true });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ pointer: '/context/0/tool/t', message: expect.stringMatching(/^Expected a valid JSON Schema: .*properties\/x\/type/) });
  });

  it('reports an _output schema that does not compile where the document wrote it', () => {
    const pointers = pointersOf({ context: [{ type: 'tool', tool: { t: { _output: { type: 'nope' } } } }], schema: true });
    expect(pointers).toContain('/context/0/tool/t/_output');
  });

  it.each(['data', 'input', 'state'])("reports a %s message's schema that does not compile at its schema", (type) => {
    const message = type === 'data' ? { type, data: 1, schema: { type: 'nope' } } : { type, [type]: {}, schema: { type: 'nope' } };
    expect(pointersOf({ context: [{ type: 'user', text: 'x' }, message], schema: true })).toEqual(['/context/1/schema']);
  });

  it('reports malformed input expressions in plan calls at their pointer, however deep (VAR-8)', () => {
    const problems = problemsOf({
      context: [{ type: 'plan', calls: [{ _tool: 'a', x: '†a.b || †c && †d', n: { deep: ['ok', '†a || x'] } }] }],
      schema: true,
    });
    expect(problems.map((problem) => problem.pointer)).toEqual(['/context/0/calls/0/x', '/context/0/calls/0/n/deep/1']);
    expect(problems[0]?.message).toContain('mixes `||` and `&&`');
    expect(problems[1]?.message).toContain('"x"');
  });

  it('leaves plan strings that are not expressions alone: templates and plain text load', () => {
    const document = { context: [{ type: 'plan', calls: [{ _tool: 'a', t: 'Hello †input.name, you || me', p: 'a || b', r: '†input.name' }] }], schema: true };
    expect(() => validateRequest(document, LOCATION, defaultHandlers())).not.toThrow();
  });

  it('escapes parameter names in pointers (RFC 6901)', () => {
    expect(pointersOf({ context: [{ type: 'plan', calls: [{ _tool: 'a', 'a/b': '†x || y' }] }], schema: true })).toEqual(['/context/0/calls/0/a~1b']);
  });

  it.each([
    ['a side that is not a reference', '†state.x || nope'],
    ['mixed operators', '†state.x || †state.y && †state.z'],
    ['text after a reference', '†state.x and more'],
  ])('reports an _outputPath with %s at /calls/<i>/_outputPath (VAR-8)', (_name, outputPath) => {
    const problems = problemsOf({ context: [{ type: 'plan', calls: [{ _tool: 'a', _outputPath: outputPath }] }], schema: true });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ pointer: '/context/0/calls/0/_outputPath', message: expect.stringContaining(JSON.stringify(outputPath)) });
  });

  it('reports a plan whose calls form a cycle at /calls, naming the calls by _id or by index and tool (PLAN-4)', () => {
    const problems = problemsOf({
      context: [
        { type: 'user', text: 'x' },
        {
          type: 'plan',
          calls: [
            { _tool: 'free', _outputPath: '†state.c' },
            { _tool: 'a', x: '†state.b', _outputPath: '†state.a' },
            { _tool: 'b', y: '†state.a.deep', _outputPath: '†state.b', _id: 'second' },
          ],
        },
      ],
      schema: true,
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.pointer).toBe('/context/1/calls');
    expect(problems[0]?.message).toContain('#1 (a) waits for second (b)');
    expect(problems[0]?.message).toContain('second (b) waits for #1 (a)');
    expect(problems[0]?.message).not.toContain('free');
  });

  it('does not check the tools plan calls name (PLAN-8)', () => {
    expect(() => validateRequest({ context: [{ type: 'plan', calls: [{ _tool: 'nowhere' }] }], schema: true }, LOCATION, defaultHandlers())).not.toThrow();
  });

  it('reports a data message whose _path is not a path at /context/<i>/_path, before anything runs (DOC-5, VAR-12)', () => {
    const problems = problemsOf({
      context: [
        { type: 'user', text: 'x' },
        { type: 'data', kind: 'k', data: 1, _path: 'a..b' },
      ],
      schema: true,
    });
    expect(problems).toEqual([
      {
        document: LOCATION,
        pointer: '/context/1/_path',
        message: `The data message of kind "k" has the _path "a..b", which is not a path such as "items[0].name" ('' for the whole kind).`,
      },
    ]);
  });

  it("asks a data-like handler's record hook, so a custom type's unknown _outputMethod is found at load too (VAR-13)", () => {
    const data = defaultHandlers().get('data');
    const handlers = defaultHandlers().register({ ...data, type: 'note', schema: true });
    const problems = problemsOf({ context: [{ type: 'note', kind: 'k', data: 1, _path: 'a', _outputMethod: 'replace' }], schema: true }, handlers);
    expect(problems.map((problem) => problem.pointer)).toEqual(['/context/0/_outputMethod']);
    expect(problems[0]?.message).toContain('_outputMethod "replace"; expected one of set, merge, assign, push, concat');
  });

  it('loads data messages whose writes read, the root path included', () => {
    const context = [
      { type: 'data', kind: 'k', data: 1, _path: '' },
      { type: 'data', kind: 'k', data: 2, _path: 'items[0]["x y"]', _outputMethod: 'push' },
    ];
    expect(validateRequest({ context, schema: true }, LOCATION, defaultHandlers()).document.context).toEqual(context);
  });

  it('hides semantic problems behind structural ones, so a document is fixed in two rounds at most', () => {
    const document = {
      context: [
        { type: 'tool', tool: { t: { properties: { x: { type: 'nope' } } } } },
        { type: 'plan', calls: [{ _tool: 'a', x: '†a || †b && †c' }] },
        { type: 'user' },
      ],
      schema: true,
    };
    expect(pointersOf(document)).toEqual(['/context/2']);
    document.context.pop();
    expect(pointersOf(document)).toEqual(['/context/0/tool/t', '/context/1/calls/0/x']);
  });

  it('hides semantic problems behind a bad output schema too (it is checked in step 3)', () => {
    expect(pointersOf({ context: [{ type: 'data', data: 1, schema: { type: 'nope' } }], schema: { type: 'nope' } })).toEqual(['/schema']);
  });
});

describe('parseRequestText', () => {
  it('reports text that is not JSON with the line and column of the problem, naming the document', () => {
    let caught: unknown;
    try {
      parseRequestText('{\n  "context": [,],\n  "schema": true\n}', '/requests/broken.json', defaultHandlers());
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RequestError);
    const error = caught as RequestError;
    expect(error.problems).toEqual([
      { document: '/requests/broken.json', pointer: '', message: expect.stringMatching(/^Expected valid JSON/), line: 2, column: 15 },
    ]);
    expect(error.message).toContain('/requests/broken.json:2:15: Expected valid JSON');
  });

  it('validates parsed text like an in-memory document', () => {
    expect(parseRequestText('{"context": [], "schema": {"type": "string"}}', 'https://example.test/a/b.json', defaultHandlers())).toMatchObject({
      location: 'https://example.test/a/b.json',
      name: 'b',
    });
  });
});

describe('how deep a document may nest (DOC-10)', () => {
  const deep = (levels: number): unknown => {
    let value: unknown = 'leaf';
    for (let level = 0; level < levels; level++) value = { a: value };
    return value;
  };
  const document = (data: unknown) => ({ context: [{ type: 'data', kind: 'k', data }], schema: true });
  // The document, its context and the message are three levels; the data's first object is the fourth.
  const tooDeep = `/context/0/data${'/a'.repeat(MAX_NESTING_DEPTH - 3)}`;

  it('loads a document nested exactly MAX_NESTING_DEPTH levels deep', () => {
    expect(validateRequest(document(deep(MAX_NESTING_DEPTH - 3)), LOCATION, defaultHandlers()).document.context).toHaveLength(1);
  });

  it('refuses a document nested deeper with invalid_request at the pointer of the first container too deep', () => {
    expect(problemsOf(document(deep(100_000)))).toEqual([
      { document: LOCATION, pointer: tooDeep, message: 'Expected JSON nested at most 100 levels deep, but this value is nested deeper.' },
    ]);
  });

  it('refuses document text nested deeper the same way, by pointer rather than line and column', () => {
    let thrown: unknown;
    try {
      parseRequestText(JSON.stringify(document(deep(MAX_NESTING_DEPTH))), LOCATION, defaultHandlers());
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RequestError);
    expect((thrown as RequestError).problems).toEqual([
      { document: LOCATION, pointer: tooDeep, message: 'Expected JSON nested at most 100 levels deep, but this value is nested deeper.' },
    ]);
    expect((thrown as RequestError).message).toContain(`${LOCATION}#${tooDeep}: Expected JSON nested at most 100 levels deep`);
  });
});

describe('requestName (DOC-4)', () => {
  const document = (name?: string): RequestDocument => ({ context: [], schema: true, ...(name === undefined ? {} : { meta: { name } }) });

  it('is meta.name when present', () => {
    expect(requestName(document('summarizer'), '/a/other.json')).toBe('summarizer');
  });

  it.each([
    ['/work/requests/summarizer.json', 'summarizer'],
    ['https://example.test/requests/sum.json?version=2#sha256-abc', 'sum'],
    ['https://example.test/requests/notes', 'notes'],
    ['relative/Report.JSON', 'Report'],
    ['anonymous:advise', 'anonymous:advise'],
  ])('is the last segment of %s without .json, query and fragment: %s', (location, name) => {
    expect(requestName(document(), location)).toBe(name);
  });

  it('falls back to the location itself when it has no last segment', () => {
    expect(requestName(document(), '/')).toBe('/');
  });
});

describe('validateRequest: a chat message whose content is a message (MSG-20)', () => {
  const load = (context: unknown[]) => validateRequest({ context, schema: true }, LOCATION, defaultHandlers()).document.context;

  it("loads act 001's shape as the message its content holds", () => {
    expect(load([{ role: 'user', content: { type: 'input', input: { city: 'Paris' } } }])).toEqual([{ type: 'input', input: { city: 'Paris' } }]);
    expect(load([{ type: 'user', content: { type: 'state', count: 1 } }])).toEqual([{ type: 'state', state: { count: 1 } }]);
    expect(load([{ role: 'system', content: { type: 'text', text: 'Be brief.' } }])).toEqual([{ type: 'text', text: 'Be brief.', role: 'system' }]);
    expect(load([{ role: 'assistant', content: { type: 'assistant', message: 'Done.' } }])).toEqual([{ type: 'assistant', text: 'Done.' }]);
  });

  it('reports problems of the content below the turn, where they are written', () => {
    expect(
      pointersOf({
        context: [
          { role: 'user', content: { type: 'data', kind: 'bad kind', data: 1 } },
          { role: 'user', content: { type: 'data', kind: 'k' } },
          { role: 'user', content: { type: 'input', city: 'Paris', schema: { type: 5 } } },
          { role: 'user', content: { type: 'hologram' } },
          { type: 'user', content: { type: 'tool', tool: { t: { _delegate: 5 } } } },
        ],
        schema: true,
      }),
    ).toEqual(['/context/0/content/kind', '/context/1/content', '/context/3/content/type', '/context/4/content/tool/t/_delegate']);
    // The schema problem is found once the shapes are valid.
    expect(pointersOf({ context: [{ role: 'user', content: { type: 'input', city: 'Paris', schema: { type: 5 } } }], schema: true })).toEqual([
      '/context/0/content/schema',
    ]);
  });

  it('refuses content without a type, a role its content contradicts, and fields beside role and content', () => {
    const problems = problemsOf({
      context: [
        { role: 'user', content: { city: 'Paris' } },
        { role: 'system', content: { type: 'state', count: 1 } },
        { role: 'user', content: { type: 'assistant', text: 'x' } },
        { role: 'user', content: { type: 'text', text: 'x', role: 'system' } },
        { role: 'user', name: 'bob', content: { type: 'input', city: 'Paris' } },
      ],
      schema: true,
    });
    expect(problems.map((problem) => problem.pointer)).toEqual([
      '/context/0/content',
      '/context/1/role',
      '/context/2/role',
      '/context/3/role',
      '/context/4/name',
    ]);
    expect(problems[0]?.message).toContain('names its type in "type"');
    expect(problems[1]?.message).toBe(
      'Expected the role "user" for a chat message whose content is a "state" message: structured messages reach the model as user context, so the role "system" would be ignored.',
    );
    expect(problems[2]?.message).toContain('"assistant"');
    expect(problems[3]?.message).toContain('"system"');
    expect(problems[4]?.message).toContain('Unexpected property "name"');
  });

  it('keeps text content as text: only an object content is a message', () => {
    expect(load([{ role: 'user', content: 'hi' }])).toEqual([{ type: 'user', text: 'hi' }]);
    expect(pointersOf({ context: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], schema: true })).toEqual(['/context/0/content']);
  });
});
