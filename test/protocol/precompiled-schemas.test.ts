/** The build's precompiled validators (CLI-34) against ajv compiling the same schemas at run time: every one present, up to date, and reporting the same errors. */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type PrecompiledValidators,
  USER_AJV_OPTIONS,
  compiledDocumentSchema,
  documentSchemaDigest,
  documentSchemaNames,
  newAjv,
  schemaProblem,
} from '../../src/protocol/schemas.js';

// The build's module and its validators (npm test builds first), beside the sources' compile at run time.
const built = (await import(new URL('../../dist/protocol/schemas.js', import.meta.url).href)) as typeof import('../../src/protocol/schemas.js');
const precompiled = createRequire(import.meta.url)('../../dist/protocol/document-validators.cjs') as PrecompiledValidators;
const FIXTURES = new URL('../../spec/schemas/fixtures/', import.meta.url);

/** Every value of spec/schemas/fixtures and every Request document under requests/: valid and invalid documents of every kind. */
function corpus(): unknown[] {
  const values: unknown[] = [];
  for (const name of readdirSync(FIXTURES)) {
    const file = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as { fixtures: { data: unknown }[] };
    for (const fixture of file.fixtures) values.push(fixture.data);
  }
  for (const name of readdirSync(new URL('../../requests/', import.meta.url), { recursive: true, encoding: 'utf8' })) {
    if (name.endsWith('.json')) values.push(JSON.parse(readFileSync(new URL(`../../requests/${name}`, import.meta.url), 'utf8')));
  }
  return values;
}

/** Schemas a user may write wrongly, each breaking the meta-schema somewhere else, and a few right ones. */
const USER_SCHEMAS: unknown[] = [
  { type: 'nope' },
  { type: ['string', 7] },
  { properties: 3 },
  { properties: { a: { type: 'strin' } }, required: 'a' },
  { required: ['a', 'a'] },
  { minimum: 'one' },
  { maxLength: -1 },
  { items: [{ type: 'string' }] },
  { prefixItems: {} },
  { enum: 'x' },
  { allOf: {} },
  { anyOf: [] },
  { $ref: 3 },
  { $defs: { a: 5 } },
  { additionalProperties: 'no' },
  { dependentRequired: { a: [1] } },
  { pattern: 5 },
  { format: 5 },
  { type: 'object', properties: { a: { type: 'object', properties: { b: { minItems: 'x' } } } } },
  { type: 'object', properties: { name: { type: 'string', format: 'email' } }, required: ['name'] },
  { $ref: '#/$defs/a', $defs: { a: { type: 'integer', minimum: 0 } } },
  true,
  false,
];

describe('the precompiled validators of spec/schemas', () => {
  it('hold every schema of spec/schemas and each of its $defs', () => {
    expect(Object.keys(precompiled.documents).sort()).toEqual(documentSchemaNames().sort());
  });

  it('were compiled from spec/schemas as they are now (npm run build regenerates them)', () => {
    expect(precompiled.sources).toBe(documentSchemaDigest());
  });

  it('are what the build hands out, not a compile at run time', () => {
    expect(built.documentSchema('request.schema.json')).toBe(precompiled.documents['request.schema.json']);
    expect(built.documentSchema('message.schema.json#/$defs/turn')).toBe(precompiled.documents['message.schema.json#/$defs/turn']);
  });

  it('report the same errors as ajv compiling the schema, for every document of the corpus against every schema', () => {
    const values = corpus();
    let failures = 0;
    for (const name of documentSchemaNames()) {
      const fast = precompiled.documents[name];
      const slow = compiledDocumentSchema(name);
      for (const value of values) {
        const valid = fast(value);
        expect(valid).toBe(slow(value));
        expect(fast.errors ?? null).toEqual(slow.errors ?? null);
        if (!valid) failures++;
      }
    }
    // The corpus reaches the errors: most values break most schemas.
    expect(failures).toBeGreaterThan(1000);
  });
});

describe('built code without the precompiled validators', () => {
  const root = mkdtempSync(join(tmpdir(), 'precompiled-missing-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('fails naming the missing file rather than compiling spec/schemas at every start', () => {
    // The built module and what it imports, with spec/ and node_modules beside them, but no document-validators.cjs.
    const project = resolve(import.meta.dirname, '../..');
    mkdirSync(join(root, 'dist/protocol'), { recursive: true });
    for (const file of ['schemas.js', 'json.js', 'types.js']) copyFileSync(join(project, 'dist/protocol', file), join(root, 'dist/protocol', file));
    symlinkSync(join(project, 'spec'), join(root, 'spec'));
    symlinkSync(join(project, 'node_modules'), join(root, 'node_modules'));
    const child = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "(await import('./dist/protocol/schemas.js')).documentSchema('request.schema.json')"],
      { cwd: root, encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.status).not.toBe(0);
    expect(child.stderr).toContain(`Expected the precompiled validators of spec/schemas at ${join(root, 'dist/protocol/document-validators.cjs')}`);
  });
});

describe('a user schema checked by the precompiled meta-schema', () => {
  it.each(USER_SCHEMAS.map((schema) => [JSON.stringify(schema), schema]))('is judged as ajv judges it: %s', (_text, schema) => {
    const ajv = newAjv(USER_AJV_OPTIONS);
    expect(precompiled.userSchema(schema)).toBe(ajv.validateSchema(schema as object));
    expect(precompiled.userSchema.errors ?? null).toEqual(ajv.errors ?? null);
    // The problem sentence the loader shows, from the build (precompiled) and from the sources (ajv's own check).
    expect(built.schemaProblem(schema)).toBe(schemaProblem(schema));
  });
});
