// A root with a caller delegating a pitch deck to an evaluator: the attachment tests' Requests and files (ATT-*).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { folderWith } from './cli.js';

/** What a deck root is made of besides its defaults. */
export interface DeckRootOptions {
  /** The evaluator's `config.attachments` (ATT-3); none when absent. */
  policy?: Record<string, unknown>;
  /** The caller's `config.attachments`; none when empty. */
  caller?: Record<string, unknown>;
  /** Meta-properties added to the caller's `evaluate` tool. */
  toolMeta?: Record<string, unknown>;
  /** The bytes of input/deck.pdf. */
  pdf: string;
}

/**
 * A root holding caller.json (its tool `evaluate` delegates to ./evaluator.json), evaluator.json,
 * input/deck.pdf, input/notes.txt ("growth 40% a month") and secret.pdf outside input/.
 */
export function deckRoot(options: DeckRootOptions): string {
  const { policy, caller = {}, toolMeta = {} } = options;
  const root = folderWith({
    'caller.json': {
      meta: { name: 'caller' },
      ...(Object.keys(caller).length > 0 ? { config: { attachments: caller } } : {}),
      context: [
        { type: 'system', text: 'Hand the deck to the evaluator.' },
        {
          type: 'tool',
          tool: {
            evaluate: {
              type: 'object',
              properties: { focus: { type: 'string' }, attachments: { type: 'array', items: { type: 'string' } } },
              _delegate: './evaluator.json',
              ...toolMeta,
            },
          },
        },
      ],
      schema: true,
    },
    'evaluator.json': {
      meta: { name: 'evaluator' },
      ...(policy === undefined ? {} : { config: { attachments: policy } }),
      context: [{ type: 'system', text: 'Evaluate the attached deck.' }],
      schema: { type: 'string' },
    },
  });
  mkdirSync(join(root, 'input'));
  writeFileSync(join(root, 'input', 'deck.pdf'), options.pdf);
  writeFileSync(join(root, 'input', 'notes.txt'), 'growth 40% a month');
  writeFileSync(join(root, 'secret.pdf'), 'secret');
  return root;
}
