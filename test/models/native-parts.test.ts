/** Attachments reach the providers as their native parts (ATT-6): the real OpenAI and Anthropic SDKs against loopback servers, images and PDFs as base64. */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../src/models/anthropic.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { RecordingModel } from '../../src/models/recording.js';
import { ReplayModel } from '../../src/models/replay.js';
import type { ModelRequest, ProviderFile } from '../../src/protocol/model.js';
import { anthropicMessage } from './support/anthropic-wire.js';
import { type LoopbackServer, startServer } from './support/loopback.js';
import { openAICompletion } from './support/openai-wire.js';
import { solutionSchema } from './support/solution-schema.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const image: ProviderFile = { path: 'input/photo.png', mediaType: 'image/png', data: new Uint8Array([137, 80, 78, 71, 1, 2, 3]) };
const pdf: ProviderFile = { path: 'input/deck.pdf', mediaType: 'application/pdf', data: new TextEncoder().encode('%PDF-1.4 deck') };
const base64 = (file: ProviderFile) => Buffer.from(file.data).toString('base64');

const request: ModelRequest = {
  requestName: 'evaluator',
  step: 0,
  messages: [
    { role: 'system', content: 'You evaluate decks.' },
    { role: 'user', content: 'Attachments: input/photo.png, input/deck.pdf', files: [image, pdf] },
    { role: 'user', content: 'No files here.', files: [] },
  ],
  schema: solutionSchema,
  config: {},
};
const answer = { calls: [], output: 'fine' };

describe('native attachment parts (ATT-6)', () => {
  it('OpenAI: an image_url part and a file part, data URLs in base64, after the text', async () => {
    server = await startServer([openAICompletion(JSON.stringify(answer))]);
    const model = new OpenAIModel({ model: 'gpt-4.1-mini', env: { OPENAI_API_KEY: 'k' }, baseUrl: server.url, stream: false });
    expect((await model.generate(request)).solution).toEqual(answer);
    expect(server.requests[0]?.body.messages).toEqual([
      { role: 'system', content: 'You evaluate decks.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Attachments: input/photo.png, input/deck.pdf' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${base64(image)}` } },
          { type: 'file', file: { filename: 'input/deck.pdf', file_data: `data:application/pdf;base64,${base64(pdf)}` } },
        ],
      },
      { role: 'user', content: 'No files here.' },
    ]);
  });

  it('Anthropic: an image block and a document block, base64 sources, after the text', async () => {
    server = await startServer([anthropicMessage(answer)]);
    const model = new AnthropicModel({ model: 'claude-haiku-4-5', env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url }, stream: false });
    expect((await model.generate(request)).solution).toEqual(answer);
    expect(server.requests[0]?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Attachments: input/photo.png, input/deck.pdf' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: base64(image) } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: base64(pdf) } },
        ],
      },
      { role: 'user', content: 'No files here.' },
    ]);
  });

  it('a recorded cassette holds none of the bytes, and replays the attachment request by name and step (ATT-8)', async () => {
    server = await startServer([openAICompletion(JSON.stringify(answer))]);
    const path = join(await mkdtemp(join(tmpdir(), 'native-parts-')), 'run.cassette.json');
    const live = new RecordingModel(new OpenAIModel({ model: 'gpt-4.1-mini', env: { OPENAI_API_KEY: 'k' }, baseUrl: server.url, stream: false }), path);
    await live.generate(request);
    const cassette = await readFile(path, 'utf8');
    expect(cassette).not.toContain(base64(image));
    expect(cassette).not.toContain(base64(pdf));
    expect(cassette).not.toContain('%PDF');
    expect((await (await ReplayModel.fromFile(path)).generate(request)).solution).toEqual(answer);
  });
});
