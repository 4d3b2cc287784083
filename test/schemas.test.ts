/** Data-driven tests of the document schemas: every fixture in spec/schemas/fixtures goes through the real loaders. */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { ModelConfigError } from '../src/models/config-error.js';
import { validateCassette } from '../src/models/cassette.js';
import { readModelsFile } from '../src/models/model-catalog.js';
import { RequestError } from '../src/protocol/errors.js';
import { Runtime } from '../src/protocol/run/runtime.js';

/** One fixture: a value, whether it is valid, and (when invalid) the JSON pointers a loader must report. */
interface Fixture {
  description: string;
  valid: boolean;
  data: unknown;
  pointers?: string[];
}

/** A fixture file: the schema it exercises and how each value is wrapped before loading. */
interface FixtureFile {
  schema: string;
  wrap: 'document' | 'message' | 'tool' | 'call' | 'cassette' | 'models';
  fixtures: Fixture[];
}

const FIXTURES = new URL('../spec/schemas/fixtures/', import.meta.url);
const SCHEMAS = new URL('../spec/schemas/', import.meta.url);
const LOCATION = '/fixtures/request.json';

/** The document a value is loaded in, and the pointer prefix of the value inside it. */
function wrapped(wrap: FixtureFile['wrap'], data: unknown): { document: unknown; prefix: string } {
  switch (wrap) {
    case 'document':
      return { document: data, prefix: '' };
    case 'message':
      return { document: { context: [data], schema: true }, prefix: '/context/0' };
    case 'tool':
      return { document: { context: [{ type: 'tool', tool: { t: data } }], schema: true }, prefix: '/context/0/tool/t' };
    case 'call':
      return { document: { context: [{ type: 'plan', calls: [data] }], schema: true }, prefix: '/context/0/calls/0' };
    case 'cassette':
    case 'models':
      return { document: data, prefix: '' };
  }
}

/** Loads a models.json fixture the way the registry does: from a file. */
function loadModelsFile(data: unknown): string[] | 'valid' {
  const folder = mkdtempSync(join(tmpdir(), 'models-fixture-'));
  const path = join(folder, 'models.json');
  try {
    writeFileSync(path, JSON.stringify(data));
    readModelsFile(path);
    return 'valid';
  } catch (error) {
    if (!(error instanceof ModelConfigError)) throw error;
    return error.problems.map((problem) => problem.pointer);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Loads a fixture with the real loader; returns the problem pointers (relative to the value), or [] when it loads. */
function problemPointers(wrap: FixtureFile['wrap'], data: unknown): string[] | 'valid' {
  if (wrap === 'models') return loadModelsFile(data);
  const { document, prefix } = wrapped(wrap, data);
  try {
    if (wrap === 'cassette') validateCassette(document, LOCATION);
    else new Runtime().validate(document, LOCATION);
    return 'valid';
  } catch (error) {
    const problems = error instanceof RequestError || error instanceof ModelConfigError ? error.problems : undefined;
    if (!problems) throw error;
    for (const problem of problems) expect(problem.document).toBe(LOCATION);
    return problems.map((problem) => (problem.pointer.startsWith(prefix) ? problem.pointer.slice(prefix.length) : `(outside) ${problem.pointer}`));
  }
}

const files = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.fixtures.json'))
  .sort()
  .map((name) => ({ name, file: JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as FixtureFile }));

describe('the document schema fixtures', () => {
  it('cover every schema in spec/schemas', () => {
    const schemas = readdirSync(SCHEMAS)
      .filter((name) => name.endsWith('.schema.json'))
      .sort();
    expect(files.map(({ file }) => file.schema).sort()).toEqual(schemas);
  });

  for (const { name, file } of files) {
    describe(name, () => {
      for (const fixture of file.fixtures) {
        it(`${fixture.valid ? 'accepts' : 'refuses'} ${fixture.description}`, () => {
          const outcome = problemPointers(file.wrap, fixture.data);
          if (fixture.valid) {
            expect(outcome).toBe('valid');
            return;
          }
          expect(outcome).not.toBe('valid');
          for (const pointer of fixture.pointers ?? []) expect(outcome).toContain(pointer);
        });
      }
    });
  }
});

describe('the published cassette schema', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = ajv.compile(JSON.parse(readFileSync(new URL('cassette.schema.json', SCHEMAS), 'utf8')) as object);
  const cassettes = files.find(({ file }) => file.wrap === 'cassette')?.file.fixtures ?? [];

  for (const fixture of cassettes) {
    it(`agrees with the cassette loader on ${fixture.description}`, () => {
      expect(validate(fixture.data)).toBe(fixture.valid);
    });
  }
});
