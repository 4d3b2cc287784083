/** The resolver contract, run against every implementation: file, url (untrusted and trusted hosts) and anonymous. Each locates; behind a registry, what it locates is pinned, parsed and validated. */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolSchema } from '../../src/protocol/types.js';
import { AnonymousResolver, anonymousRequest } from '../../src/resolvers/anonymous-resolver.js';
import { FileResolver } from '../../src/resolvers/file-resolver.js';
import { integrityOf } from '../../src/resolvers/integrity.js';
import type { ResolveContext, Resolver } from '../../src/resolvers/resolver.js';
import { UrlResolver } from '../../src/resolvers/url-resolver.js';
import {
  INVALID_POINTER,
  type RegisteredResolver,
  expectDelegateError,
  expectRequestError,
  invalidDocument,
  makeTempDir,
  registered,
  serveDocuments,
  startServer,
  validDocument,
  writeDocument,
} from './helpers.js';

/** What one implementation provides to the contract. */
interface ContractSubject {
  resolver: Resolver;
  /** A reference to a valid document, with what resolving it must give and the exact bytes it pins. */
  valid: { reference: string; context: ResolveContext; name: string; location: string; trusted: boolean; bytes: string };
  /** A reference to an invalid document, with the document and pointer its problem must name. */
  invalid: { reference: string; context: ResolveContext; document: string; pointer: string };
  /** References in other resolvers' forms, which this one must not accept. */
  foreign: { reference: string; context: ResolveContext }[];
  /** A reference to nothing, when the form can name a missing document. */
  missing?: { reference: string; context: ResolveContext };
  cleanup(): Promise<void>;
}

const plainTool: ToolSchema = { type: 'object', properties: {} };

function context(base: string | undefined, toolName = 'delegate_tool', tool: ToolSchema = plainTool): ResolveContext {
  return { ...(base === undefined ? {} : { base }), toolName, tool };
}

async function fileSubject(): Promise<ContractSubject> {
  const dir = await makeTempDir('contract-file-');
  const bytes = await writeDocument(join(dir.path, 'docs', 'good.json'), validDocument('good-doc'));
  await writeDocument(join(dir.path, 'docs', 'bad.json'), invalidDocument());
  const base = join(dir.path, 'main.json');
  return {
    resolver: new FileResolver({ root: dir.path }),
    valid: { reference: './docs/good.json', context: context(base), name: 'good-doc', location: join(dir.path, 'docs', 'good.json'), trusted: true, bytes },
    invalid: { reference: 'docs/bad.json', context: context(base), document: join(dir.path, 'docs', 'bad.json'), pointer: INVALID_POINTER },
    foreign: [
      { reference: 'anonymous', context: context(base) },
      { reference: 'https://example.com/good.json', context: context(base) },
      { reference: './good.json', context: context('http://127.0.0.1/main.json') },
    ],
    missing: { reference: './docs/missing.json', context: context(base) },
    cleanup: dir.cleanup,
  };
}

async function urlSubject(trusted: boolean): Promise<ContractSubject> {
  const bytes = JSON.stringify(validDocument());
  const server = await startServer(serveDocuments({ '/docs/good.json': bytes, '/docs/bad.json': JSON.stringify(invalidDocument()) }));
  const resolver = new UrlResolver({ allowHosts: ['127.0.0.1'], trustHosts: trusted ? [`127.0.0.1:${server.port}`] : [] });
  const location = `${server.origin}/docs/good.json`;
  return {
    resolver,
    valid: { reference: location, context: context(undefined), name: 'good', location, trusted, bytes },
    invalid: { reference: './bad.json', context: context(location), document: `${server.origin}/docs/bad.json`, pointer: INVALID_POINTER },
    foreign: [
      { reference: 'anonymous', context: context(location) },
      { reference: './good.json', context: context('/tmp/main.json') },
      { reference: 'ftp://127.0.0.1/good.json', context: context(undefined) },
    ],
    missing: { reference: `${server.origin}/docs/missing.json`, context: context(undefined) },
    cleanup: async () => {
      await resolver.close();
      await server.close();
    },
  };
}

async function anonymousSubject(): Promise<ContractSubject> {
  const tool: ToolSchema = {
    type: 'object',
    description: 'Summarise the text.',
    properties: { text: { type: 'string' }, _delegate: { const: 'anonymous' }, _output: { type: 'object', properties: { summary: { type: 'string' } } } },
    required: ['text'],
  };
  const broken: ToolSchema = { type: 'object', properties: { _output: { type: 'not-a-type' } } };
  return {
    resolver: new AnonymousResolver(),
    valid: {
      reference: 'anonymous',
      context: context('/tmp/main.json', 'summarize', tool),
      name: 'anonymous:summarize',
      location: 'anonymous:summarize',
      trusted: true,
      bytes: JSON.stringify(anonymousRequest('summarize', tool)),
    },
    invalid: { reference: 'anonymous', context: context(undefined, 'broken', broken), document: 'anonymous:broken', pointer: '/schema' },
    foreign: [
      { reference: './anonymous.json', context: context('/tmp/main.json') },
      { reference: 'http://127.0.0.1/anonymous', context: context(undefined) },
    ],
    cleanup: async () => undefined,
  };
}

const implementations: { name: string; setup: () => Promise<ContractSubject> }[] = [
  { name: 'file', setup: fileSubject },
  { name: 'url (untrusted host)', setup: () => urlSubject(false) },
  { name: 'url (trusted host)', setup: () => urlSubject(true) },
  { name: 'anonymous', setup: anonymousSubject },
];

/** The text of what a resolver located. */
function textOf(content: Uint8Array | string): string {
  return typeof content === 'string' ? content : Buffer.from(content).toString('utf8');
}

describe.each(implementations)('the $name resolver', ({ setup }) => {
  let subject: ContractSubject;
  /** The resolver behind a registry of its own, as callers meet it. */
  let read: RegisteredResolver<Resolver>;
  beforeAll(async () => {
    subject = await setup();
    read = registered(subject.resolver);
  });
  afterAll(async () => {
    await subject.cleanup();
  });

  it('accepts its own form of reference', () => {
    expect(subject.resolver.accepts(subject.valid.reference, subject.valid.context)).toBe(true);
    expect(subject.resolver.accepts(subject.invalid.reference, subject.invalid.context)).toBe(true);
  });

  it('does not accept the forms of other resolvers', () => {
    for (const { reference, context: foreignContext } of subject.foreign) {
      expect(subject.resolver.accepts(reference, foreignContext), reference).toBe(false);
    }
  });

  it('locates a document without reading it: its location, its exact content and its trust', async () => {
    const located = await subject.resolver.resolve(subject.valid.reference, subject.valid.context);
    expect('document' in located).toBe(false);
    if ('document' in located) return;
    expect(located.location).toBe(subject.valid.location);
    expect(located.trusted).toBe(subject.valid.trusted);
    expect(textOf(located.content)).toBe(subject.valid.bytes);
  });

  it('locates an invalid document too: reading it is the job of the registry', async () => {
    const located = await subject.resolver.resolve(subject.invalid.reference, subject.invalid.context);
    expect(located.location).toBe(subject.invalid.document);
  });

  it('loads a valid document with its name, location and trust', async () => {
    const resolved = await read.resolve(subject.valid.reference, subject.valid.context);
    expect(resolved.name).toBe(subject.valid.name);
    expect(resolved.location).toBe(subject.valid.location);
    expect(resolved.trusted).toBe(subject.valid.trusted);
    expect(Array.isArray(resolved.document.context)).toBe(true);
    expect(resolved.document.schema).toBeDefined();
  });

  it('rejects an invalid document with a RequestError naming the document and a pointer', async () => {
    await expectRequestError(read.resolve(subject.invalid.reference, subject.invalid.context), subject.invalid.document, subject.invalid.pointer);
  });

  it('loads a document whose integrity pin matches its bytes', async () => {
    const pinned = `${subject.valid.reference}#${integrityOf(subject.valid.bytes)}`;
    expect(subject.resolver.accepts(pinned, subject.valid.context)).toBe(true);
    const resolved = await read.resolve(pinned, subject.valid.context);
    expect(resolved.location).toBe(subject.valid.location);
  });

  it('refuses a document whose integrity pin does not match, naming both digests', async () => {
    const expected = integrityOf('some other document');
    const error = await expectDelegateError(read.resolve(`${subject.valid.reference}#${expected}`, subject.valid.context), 'delegate_forbidden');
    expect(error.message).toContain(expected);
    expect(error.message).toContain(integrityOf(subject.valid.bytes));
  });

  it('reports a missing document as delegate_not_found naming the reference', async (test) => {
    if (!subject.missing) return test.skip();
    const error = await expectDelegateError(read.resolve(subject.missing.reference, subject.missing.context), 'delegate_not_found');
    expect(error.message).toContain(subject.missing.reference);
  });
});
