/** Recording: wraps a live model and writes what it answered as a replay cassette, after every answer. */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ModelError } from '../protocol/errors.js';
import type { Cassette, CassetteEntry } from './cassette.js';
import type { Model, ModelRequest, ModelResponse } from '../protocol/model.js';
import { isJsonObject } from '../protocol/types.js';

let temporaryCounter = 0;

/** Shorter prompt lines (braces, blank lines) tell nothing apart. */
const MIN_DISTINGUISHING_LENGTH = 8;

/**
 * Collects cassette entries for one file and rewrites the whole file (version 1) after each new
 * entry, so an interrupted run keeps every answer it got. Writes are serialised and atomic
 * (temporary file, then rename). Several models may share one recorder (one per file).
 * An existing file is replaced by the first write.
 */
export class CassetteRecorder {
  /** The entries recorded so far, in the order the answers arrived. */
  readonly entries: CassetteEntry[] = [];
  /** The prompt each entry answered, to tell apart entries of one request and step. */
  private readonly prompts: string[] = [];
  private queue: Promise<void> = Promise.resolve();

  /** @param path the cassette file to write. */
  constructor(readonly path: string) {}

  /**
   * Appends an entry and resolves once the file holding it is written. Entries sharing a request
   * name and step (one delegate run in parallel on two instances, say) each get a `contains`: the
   * first prompt line no sibling has, so replay hands each run its own answer whatever the order.
   */
  record(entry: CassetteEntry, prompt = ''): Promise<void> {
    this.entries.push(entry);
    this.prompts.push(prompt);
    this.distinguish(entry);
    const cassette: Cassette = { version: 1, entries: [...this.entries] };
    const write = this.queue.then(() => this.write(cassette));
    this.queue = write.catch(() => undefined);
    return write;
  }

  private distinguish(entry: CassetteEntry): void {
    const siblings = this.entries.flatMap((other, index) =>
      other.match?.request === entry.match?.request && other.match?.step === entry.match?.step ? [index] : [],
    );
    if (siblings.length < 2) return;
    for (const index of siblings) {
      const own = this.prompts[index] ?? '';
      const others = siblings.filter((other) => other !== index).map((other) => this.prompts[other] ?? '');
      const line = own
        .split('\n')
        .find((candidate) => candidate.trim().length >= MIN_DISTINGUISHING_LENGTH && others.every((other) => !other.includes(candidate)));
      const match = this.entries[index]?.match;
      if (line !== undefined && match) match.contains = line;
    }
  }

  /** Resolves when every pending write has finished. */
  flush(): Promise<void> {
    return this.queue;
  }

  private async write(cassette: Cassette): Promise<void> {
    temporaryCounter += 1;
    const temporary = `${this.path}.${process.pid}.${temporaryCounter}.tmp`;
    try {
      await mkdir(dirname(this.path), { recursive: true });
      await writeFile(temporary, `${JSON.stringify(cassette, null, 2)}\n`, 'utf8');
      await rename(temporary, this.path);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ModelError('model_error', `Cannot write the cassette ${this.path}: ${reason}`, { path: this.path }, { cause: error });
    }
  }
}

/** The cassette entry that replays `response` for `request`: the solution when it is an object, else the raw text. */
export function entryFor(request: ModelRequest, response: ModelResponse): CassetteEntry {
  const entry: CassetteEntry = { match: { request: request.requestName, step: request.step } };
  if (isJsonObject(response.solution)) entry.solution = response.solution;
  else entry.text = response.text;
  const { reasoningTokens, ...usage } = response.usage;
  entry.usage = reasoningTokens === undefined ? usage : { ...usage, reasoningTokens };
  entry.model = response.model;
  return entry;
}

/**
 * A model that answers through another and records each answer (`{match: {request, step},
 * solution | text, usage}`) into a cassette; replaying that cassette gives the same solutions.
 * Failed calls are not recorded.
 */
export class RecordingModel implements Model {
  /** The wrapped model's id: recording does not change which model answers. */
  readonly id: string;
  /** Where the entries go. */
  readonly recorder: CassetteRecorder;

  /** @param recorder a shared recorder, or the path of the cassette to write. */
  constructor(
    private readonly inner: Model,
    recorder: CassetteRecorder | string,
  ) {
    this.id = inner.id;
    this.recorder = typeof recorder === 'string' ? new CassetteRecorder(recorder) : recorder;
  }

  /** Asks the wrapped model, records the answer, then returns it unchanged. */
  async generate(request: ModelRequest): Promise<ModelResponse> {
    const response = await this.inner.generate(request);
    await this.recorder.record(entryFor(request, response), request.messages.map((message) => message.content).join('\n'));
    return response;
  }
}
