/** Property test of a worker's view (DEL-9, WRK-4, ATT-5): whatever its caller's history, a worker tool's child sees exactly its input and the attachments handed to it — nothing else of the caller, no other file. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import type { Message } from '../../src/protocol/types.js';
import { folderWith } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(30);

const FILES = ['a.txt', 'b.txt', 'c.md', 'd.json', 'e.csv'];
const root = folderWith({
  'team/evaluator.json': {
    meta: { name: 'evaluator' },
    config: { attachments: { maxCount: FILES.length } },
    context: [{ type: 'system', text: 'You evaluate.' }],
    schema: { type: 'string' },
  },
});
for (const [index, file] of FILES.entries()) writeFileSync(join(root, file), file.endsWith('.json') ? `{"marker":"FILE_${index}"}` : `FILE_${index}`);

/** One piece of the caller's history, carrying its marker in a different message type each. */
const history = fc.array(fc.constantFrom('system', 'user', 'assistant', 'state', 'data'), { maxLength: 6 }).map((types) =>
  types.map((type, index): Message => {
    const marker = `CALLER_${index}`;
    if (type === 'state') return { type: 'state', state: { [`k${index}`]: marker } } as Message;
    if (type === 'data') return { type: 'data', kind: `notes${index}`, data: { note: marker } } as Message;
    return { type, text: marker } as Message;
  }),
);

describe('what a worker sees (DEL-9, ATT-5)', () => {
  it('is its input and its attachments, whatever the caller holds', async () => {
    await fc.assert(
      fc.asyncProperty(history, fc.subarray([...FILES.keys()]), fc.integer({ min: 0, max: 999 }), async (messages, chosen, seed) => {
        const input = `INPUT_${seed}`;
        const document = {
          meta: { name: 'caller' },
          context: [...messages, { type: 'workers', from: './team/', allow: ['evaluator'] }],
          schema: { type: 'string' },
        };
        const runtime = createRuntime({ root });
        const model = stepModel(
          (request) =>
            request.requestName === 'caller'
              ? { calls: [{ _tool: 'evaluator', input, attachments: chosen.map((index) => FILES[index]) }], output: null }
              : { calls: [], output: 'seen' },
          () => ({ calls: [], output: 'done' }),
        );
        const result = await runtime.run(runtime.parse(JSON.stringify(document), join(root, 'caller.json')), { model });
        expect(result.ok).toBe(true);
        const seen = JSON.stringify(model.requests.find((request) => request.requestName === 'evaluator')?.messages);
        expect(seen).toContain(input);
        for (const [index] of FILES.entries()) expect(seen.includes(`FILE_${index}`)).toBe(chosen.includes(index));
        for (const index of messages.keys()) expect(seen).not.toContain(`CALLER_${index}`);
      }),
      settings,
    );
  });
});
