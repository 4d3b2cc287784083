/** Property (SERVE-1, SERVE-11, SERVE-12): whatever edits happen between requests, every answer is the file as it is now, and the requests of one turn agree. */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRequestHandler } from '../../src/server/handler.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(60);

/** What the served path holds, as the test knows it. */
type State = { kind: 'valid' | 'invalid'; text: string } | { kind: 'absent' } | { kind: 'outside' };

const validText = (length: number) => `${JSON.stringify({ context: [{ type: 'system', text: 'x'.repeat(length) }], schema: { type: 'string' } })}\n`;
const invalidText = (length: number) => `${JSON.stringify({ context: 'y'.repeat(length) })}\n`;
const tagOf = (text: string) => `"${createHash('sha256').update(text).digest('base64url')}"`;

const operation = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), valid: fc.boolean(), length: fc.integer({ min: 1, max: 40 }), byRename: fc.boolean() }),
  fc.record({ kind: fc.constant('delete' as const) }),
  fc.record({ kind: fc.constant('link-outside' as const) }),
  fc.record({ kind: fc.constant('get' as const), count: fc.integer({ min: 1, max: 6 }), conditional: fc.boolean(), head: fc.boolean() }),
);

describe('served documents stay fresh', () => {
  it('answers every request with the file as it is at that moment, on both faces of the handler', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 25 }), fc.boolean(), async (operations, plainFace) => {
        const base = await mkdtemp(join(tmpdir(), 'serve-fresh-property-'));
        try {
          const root = join(base, 'served');
          const file = join(root, 'doc.json');
          await mkdir(root);
          await writeFile(join(base, 'outside.json'), validText(3));
          const handler = createRequestHandler({ root, log: () => undefined });
          let state: State = { kind: 'absent' };
          let lastTag = '"none"';
          const get = async (method: string, ifNoneMatch: string | null) => {
            if (plainFace) {
              const reply = await handler.plain({ method, target: '/doc.json', ifNoneMatch });
              return { status: reply.status, etag: reply.headers.etag ?? null, text: method === 'HEAD' ? '' : new TextDecoder().decode(reply.body) };
            }
            const response = await handler(
              new Request('http://serve.test/doc.json', { method, headers: ifNoneMatch === null ? {} : { 'if-none-match': ifNoneMatch } }),
            );
            return { status: response.status, etag: response.headers.get('etag'), text: await response.text() };
          };
          for (const step of operations) {
            if (step.kind === 'write') {
              const text = step.valid ? validText(step.length) : invalidText(step.length);
              // An in-place rewrite of the same size within one timestamp tick is the one change SERVE-9 lets pass: editors rename.
              const sameSize = state.kind === 'valid' || state.kind === 'invalid' ? state.text.length === text.length : false;
              if (state.kind === 'outside') await unlink(file);
              if (step.byRename || sameSize) {
                await writeFile(join(root, 'next.tmp'), text);
                await rename(join(root, 'next.tmp'), file);
              } else {
                await writeFile(file, text);
              }
              state = { kind: step.valid ? 'valid' : 'invalid', text };
            } else if (step.kind === 'delete') {
              if (state.kind !== 'absent') await unlink(file);
              state = { kind: 'absent' };
            } else if (step.kind === 'link-outside') {
              if (state.kind !== 'absent') await unlink(file);
              await symlink(join(base, 'outside.json'), file);
              state = { kind: 'outside' };
            } else {
              const method = step.head ? 'HEAD' : 'GET';
              const sent = step.conditional ? lastTag : null;
              const answers = await Promise.all(Array.from({ length: step.count }, () => get(method, sent)));
              const now = state;
              for (const answer of answers) {
                if (now.kind === 'valid') {
                  const tag = tagOf(now.text);
                  expect(answer.etag).toBe(tag);
                  expect(answer.status).toBe(sent === tag ? 304 : 200);
                  expect(answer.text).toBe(sent === tag || method === 'HEAD' ? '' : now.text);
                  lastTag = tag;
                } else {
                  expect(answer.status).toBe(now.kind === 'invalid' ? 422 : 404);
                  expect(answer.text).not.toContain('"system"');
                }
              }
            }
          }
        } finally {
          await rm(base, { recursive: true, force: true });
        }
      }),
      settings,
    );
  });
});
