/** Unit tests of src/protocol/schemas.ts: compiling users' schemas once, describing failures with pointers, the document schemas. */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_DIRECTORY, compileSchema, describeErrors, documentSchema, schemaProblem, validateAgainst } from '../../src/protocol/schemas.js';

/** Runs a schema on a value and describes the failure, as the loader and the loop do. */
function issuesOf(schema: Parameters<typeof compileSchema>[0], value: unknown, prefix = '') {
  const validate = compileSchema(schema);
  expect(validate(value)).toBe(false);
  return describeErrors(validate.errors, prefix);
}

describe('compileSchema', () => {
  it('compiles one schema object once: the same object gives the same validator', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(compileSchema(schema)).toBe(compileSchema(schema));
  });

  it('compiles a schema rebuilt identically every step once: equal content gives the same validator', () => {
    const build = () => ({ type: 'object', required: ['calls'], properties: { calls: { type: 'array' } } });
    const first = build();
    const second = build();
    expect(first).not.toBe(second);
    expect(compileSchema(first)).toBe(compileSchema(second));
  });

  it('gives different validators to schemas with different content', () => {
    expect(compileSchema({ type: 'string' })).not.toBe(compileSchema({ type: 'number' }));
  });

  it('compiles boolean schemas: true accepts anything, false nothing', () => {
    expect(compileSchema(true)({ any: 'thing' })).toBe(true);
    expect(compileSchema(false)(null)).toBe(false);
  });

  it('lets two documents reuse one $id with different schemas', () => {
    const a = compileSchema({ $id: 'https://example.test/shared', type: 'string' });
    const b = compileSchema({ $id: 'https://example.test/shared', type: 'number' });
    expect(a('x')).toBe(true);
    expect(b('x')).toBe(false);
    expect(b(1)).toBe(true);
  });

  it('reads only own properties, so a parameter named like an inherited member is absent from {}', () => {
    const validate = compileSchema({ type: 'object', required: ['toString'] });
    expect(validate({})).toBe(false);
  });

  it('throws for a schema that is not a valid JSON Schema', () => {
    expect(() => compileSchema({ type: 'nope' })).toThrow();
  });
});

describe('describeErrors', () => {
  it('returns no issues when there are no errors', () => {
    expect(describeErrors(null)).toEqual([]);
    expect(describeErrors(undefined)).toEqual([]);
  });

  it('gives each failure the JSON pointer of the value, below the prefix', () => {
    const issues = issuesOf({ type: 'object', properties: { items: { type: 'array', items: { type: 'integer' } } } }, { items: [1, 'two'] }, '/context/3');
    expect(issues).toEqual([{ pointer: '/context/3/items/1', message: 'Expected integer.' }]);
  });

  it('points a missing property at the object that lacks it and names the property', () => {
    const issues = issuesOf({ type: 'object', properties: { a: { type: 'object', required: ['name'] } } }, { a: {} });
    expect(issues).toEqual([{ pointer: '/a', message: 'Expected property "name" to be present.' }]);
  });

  it('points an unexpected property at the property itself, escaped, and names it', () => {
    const schema = { type: 'object', properties: { 'a/b': { type: 'object', additionalProperties: false } } };
    const issues = issuesOf(schema, { 'a/b': { 'x~y': 1 } }, '/p');
    expect(issues).toEqual([{ pointer: '/p/a~1b/x~0y', message: 'Unexpected property "x~y".' }]);
  });

  it('lists every failure at once (all errors, not the first)', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['c'] };
    const pointers = issuesOf(schema, { a: 1, b: 'x' }).map((issue) => issue.pointer);
    expect(pointers.sort()).toEqual(['', '/a', '/b']);
  });

  it('drops an anyOf summary when its branches reported what went wrong', () => {
    const issues = issuesOf({ anyOf: [{ type: 'string' }, { type: 'number' }] }, true);
    expect(issues.map((issue) => issue.message)).toEqual(['Expected string.', 'Expected number.']);
  });

  it('drops a oneOf summary when its branches reported what went wrong', () => {
    const issues = issuesOf({ oneOf: [{ type: 'string' }, { type: 'number' }] }, true);
    expect(issues.map((issue) => issue.message)).toEqual(['Expected string.', 'Expected number.']);
  });

  it('keeps a oneOf summary when no branch reported anything: several alternatives match', () => {
    const issues = issuesOf({ oneOf: [{ type: 'number' }, { type: 'integer' }, { type: 'string' }] }, 1);
    expect(issues).toEqual([{ pointer: '', message: 'Expected exactly one of the alternatives to match, but several do.' }]);
  });

  it('judges each summary by its own branches: a failing anyOf is dropped next to a oneOf that matches twice', () => {
    const schema = {
      type: 'object',
      properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] }, b: { oneOf: [{ type: 'number' }, { type: 'integer' }] } },
    };
    const issues = issuesOf(schema, { a: 1, b: 2 });
    expect(issues).toEqual([
      { pointer: '/a', message: 'Expected string.' },
      { pointer: '/a', message: 'Expected null.' },
      { pointer: '/b', message: 'Expected exactly one of the alternatives to match, but several do.' },
    ]);
  });

  // Branches that are `$ref`s report at the referenced schema's path, not under the anyOf.
  it('drops an anyOf summary whose branches are $refs that reported', () => {
    const schema = { anyOf: [{ $ref: '#/$defs/a' }, { $ref: '#/$defs/b' }], $defs: { a: { type: 'string' }, b: { type: 'number' } } };
    const issues = issuesOf(schema, true);
    expect(issues.map((issue) => issue.message)).toEqual(['Expected string.', 'Expected number.']);
  });

  it('describes enum and const failures with the allowed values', () => {
    expect(issuesOf({ enum: ['set', 'merge'] }, 'x')).toEqual([{ pointer: '', message: 'Expected one of ["set","merge"].' }]);
    expect(issuesOf({ const: 'summarize' }, 'x')).toEqual([{ pointer: '', message: 'Expected "summarize".' }]);
  });

  it('describes other keywords by name, as full sentences', () => {
    const [issue] = issuesOf({ type: 'string', minLength: 3 }, 'ab');
    expect(issue?.message).toMatch(/^Expected the value to satisfy "minLength": .+\.$/);
  });

  it('reports one failure once even when ajv repeats it', () => {
    const errors = compileSchema({ type: 'string' });
    errors(1);
    const twice = [...(errors.errors ?? []), ...(errors.errors ?? [])];
    expect(describeErrors(twice)).toHaveLength(1);
  });
});

describe('validateAgainst', () => {
  it('returns no issues for a valid value and the described issues for an invalid one', () => {
    const schema = { type: 'object', properties: { n: { type: 'number' } } };
    expect(validateAgainst(schema, { n: 1 })).toEqual([]);
    expect(validateAgainst(schema, { n: 'x' }, '/output')).toEqual([{ pointer: '/output/n', message: 'Expected number.' }]);
  });
});

describe('schemaProblem', () => {
  it('accepts every schema that compiles, booleans included', () => {
    expect(schemaProblem({ type: 'object' })).toBeUndefined();
    expect(schemaProblem(true)).toBeUndefined();
    expect(schemaProblem(false)).toBeUndefined();
  });

  it.each([
    ['a number', 3],
    ['null', null],
    ['an array', [{ type: 'string' }]],
    ['a string', 'object'],
  ])('refuses %s: a JSON Schema is an object or a boolean', (_name, value) => {
    expect(schemaProblem(value)).toBe('Expected a JSON Schema (an object or a boolean).');
  });

  it('explains in a sentence why an object schema does not compile', () => {
    const problem = schemaProblem({ type: 'nope' });
    expect(problem).toMatch(/^Expected a valid JSON Schema: .*type.*\.$/);
  });
});

describe('documentSchema', () => {
  const files = readdirSync(SCHEMA_DIRECTORY).filter((file) => file.endsWith('.schema.json'));

  it('finds the schema files of spec/schemas', () => {
    expect(files.sort()).toEqual(
      expect.arrayContaining([
        'call.schema.json',
        'cassette.schema.json',
        'message.schema.json',
        'models.schema.json',
        'request.schema.json',
        'tool.schema.json',
      ]),
    );
  });

  it.each(files)('compiles %s and rejects a value that is not even an object', (file) => {
    const validate = documentSchema(file);
    expect(typeof validate).toBe('function');
    expect(validate('not a document')).toBe(false);
  });

  it('validates the minimal valid value of each document', () => {
    expect(documentSchema('request.schema.json')({ context: [], schema: true })).toBe(true);
    expect(documentSchema('call.schema.json')({ _tool: 'greet' })).toBe(true);
    expect(documentSchema('tool.schema.json')({ properties: { city: { type: 'string' } } })).toBe(true);
    expect(documentSchema('message.schema.json')({ type: 'user', text: 'hi' })).toBe(true);
    expect(documentSchema('cassette.schema.json')({ version: 1, entries: [] })).toBe(true);
    expect(documentSchema('models.schema.json')({ models: {} })).toBe(true);
  });

  it('resolves a fragment inside a file, such as one message definition', () => {
    const turn = documentSchema('message.schema.json#/$defs/turn');
    expect(turn({ type: 'user', text: 'hi' })).toBe(true);
    expect(turn({ type: 'user' })).toBe(false);
    expect(turn({ type: 'data', text: 'hi' })).toBe(false);
  });

  it('rejects a Request with an unknown top-level field (DOC-1)', () => {
    expect(documentSchema('request.schema.json')({ context: [], schema: true, extra: 1 })).toBe(false);
  });

  it('returns the same compiled validator each time', () => {
    expect(documentSchema('request.schema.json')).toBe(documentSchema('request.schema.json'));
  });

  it('throws, naming the schema, for a name that is not in spec/schemas', () => {
    expect(() => documentSchema('nope.schema.json')).toThrow('No schema nope.schema.json in spec/schemas.');
  });
});
