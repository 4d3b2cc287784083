/** The replay model (spec/cassettes.md CAS-1 to CAS-8, CAS-14, CAS-16): plays a cassette's answers deterministically, priced as the models they stand for; also the library's test double. */
import { ModelError } from '../protocol/errors.js';
import { throwIfAborted, sleep } from './abort-error.js';
import { readCassetteFile, readCassetteFileSync, validateCassette, type Cassette, type CassetteEntry } from './cassette.js';
import { ModelCatalog } from './model-catalog.js';
import type { Model, ModelRequest, ModelResponse } from '../protocol/model.js';
import { addUsage, type Usage, zeroUsage } from '../protocol/usage.js';
import { parseModelJson } from './parse-json.js';
import { emitCalls } from './stream-calls.js';
import { answerCut } from './live-call.js';
import { type CassetteClaims, LocalCassetteClaims } from './cassette-claims.js';

/** How many characters of the prompt a no-match error quotes. */
const PROMPT_EXCERPT_LENGTH = 200;

/** Options of the replay model. */
export interface ReplayModelOptions {
  /**
   * Prices an answer whose entry names the model it stands for (CAS-14). Default: the shipped
   * models.json plus DELEGATE_MODELS, loaded the first time an entry names a model.
   */
  prices?: Pick<ModelCatalog, 'costOf'>;
  /**
   * Who else uses this cassette's consumable entries (CAS-16): default, no one — the model's own
   * {@link LocalCassetteClaims}. A queued tree gives claims shared by all its processes.
   */
  claims?: CassetteClaims;
}

/**
 * Answers model calls from a cassette. An entry matches when every `match` field it gives equals
 * the request's name and step and is contained in the prompt; the first unused matching entry is
 * consumed (`repeat: true` entries are never consumed). Matching depends only on each call's own
 * request name, step and prompt, so parallel children get the same entries in any order.
 *
 * It records every request it receives (`requests`) and reports entries never used (`unused()`),
 * so tests use it as a scripted model.
 */
export class ReplayModel implements Model {
  /** `replay:<file>`, or `replay:inline` for a cassette given as an object. */
  readonly id: string;
  /** Every request received, in order (including those that found no entry). */
  readonly requests: ModelRequest[] = [];
  private readonly entries: CassetteEntry[];
  private readonly uses: number[];
  private readonly claims: CassetteClaims;
  private prices: Pick<ModelCatalog, 'costOf'> | undefined;

  /**
   * @param cassette a cassette object (validated here) or just its entries.
   * @param source where it came from, shown in the id and in errors; `inline` by default.
   */
  constructor(cassette: Cassette | CassetteEntry[], source = 'inline', options: ReplayModelOptions = {}) {
    const value = Array.isArray(cassette) ? { version: 1, entries: cassette } : cassette;
    this.entries = validateCassette(value, source).entries;
    this.uses = this.entries.map(() => 0);
    this.id = `replay:${source}`;
    this.prices = options.prices;
    this.claims = options.claims ?? new LocalCassetteClaims();
  }

  /**
   * The same cassette with its consumable entries claimed through `claims` (CAS-16): a run tree's
   * share, so that its processes use each entry once between them. It has its own `requests` and
   * `unused()`.
   */
  sharing(claims: CassetteClaims): ReplayModel {
    return new ReplayModel(this.entries, this.id.slice('replay:'.length), { ...(this.prices ? { prices: this.prices } : {}), claims });
  }

  /** Loads a cassette file; a bad file is a ModelConfigError naming the file and the JSON pointer. */
  static async fromFile(path: string, options: ReplayModelOptions = {}): Promise<ReplayModel> {
    return new ReplayModel(await readCassetteFile(path), path, options);
  }

  /** Synchronous `fromFile`, for model factories. */
  static fromFileSync(path: string, options: ReplayModelOptions = {}): ReplayModel {
    return new ReplayModel(readCassetteFileSync(path), path, options);
  }

  /**
   * The live model a run's recorded answers came from (CAS-15): the `model` of the first entry whose
   * `match.request` is `requestName` and that names one.
   */
  modelFor(requestName: string): string | undefined {
    return this.entries.find((entry) => entry.match?.request === requestName && entry.model !== undefined)?.model;
  }

  /** Entries that no request has used yet (consumable and repeatable alike). */
  unused(): CassetteEntry[] {
    return this.entries.filter((_, index) => this.uses[index] === 0);
  }

  /** Answers with the first unused matching entry, calling `onCall` for each of its calls first. */
  async generate(request: ModelRequest): Promise<ModelResponse> {
    throwIfAborted(request.signal);
    this.requests.push(request);
    const prompt = request.messages.map((message) => message.content).join('\n');
    const found = this.entryFor(request, prompt, 0);
    // Claims answered at once keep an in-process replay as synchronous as it always was.
    const index = typeof found === 'number' ? found : await found;
    if (index < 0) {
      const excerpt = prompt.slice(0, PROMPT_EXCERPT_LENGTH);
      throw new ModelError(
        'model_error',
        `No entry of the replay cassette ${this.id.slice('replay:'.length)} matches request "${request.requestName}" at step ${request.step}; the prompt begins: ${JSON.stringify(excerpt)}`,
        { request: request.requestName, step: request.step, prompt: excerpt },
      );
    }
    this.uses[index] = (this.uses[index] ?? 0) + 1;
    const entry = this.entries[index] as CassetteEntry;
    if (entry.delayMs) await sleep(entry.delayMs, request.signal);
    // A recorded cut: the provider stopped the answer at its length limit (MODEL-4, CAS-13).
    if (entry.cut) throw answerCut(entry.model ?? this.id, maxTokensOf(request), 'config.maxTokens', entry.text ?? JSON.stringify(entry.solution));

    let text: string;
    let solution: unknown;
    if (entry.solution !== undefined) {
      solution = structuredClone(entry.solution);
      text = JSON.stringify(entry.solution);
    } else {
      text = entry.text ?? '';
      const parsed = parseModelJson(text);
      solution = parsed.ok ? parsed.value : undefined;
    }
    emitCalls(solution, request);
    throwIfAborted(request.signal);
    const usage = addUsage(zeroUsage(), entry.usage ?? {});
    return { text, solution, model: this.id, usage, ...this.priced(entry, usage) };
  }

  /**
   * The index of the first entry from `from` on, in file order, that matches and is this call's:
   * a `repeat` entry always is (CAS-3), another when its claim is granted (CAS-2); -1 for none.
   */
  private entryFor(request: ModelRequest, prompt: string, from: number): number | Promise<number> {
    for (let index = from; index < this.entries.length; index += 1) {
      const entry = this.entries[index] as CassetteEntry;
      if (!matches(entry, request, prompt)) continue;
      if (entry.repeat === true) return index;
      const granted = this.claims.claim(index);
      if (granted === true) return index;
      if (granted !== false) return granted.then((mine) => (mine ? index : this.entryFor(request, prompt, index + 1)));
    }
    return -1;
  }

  /** What a replayed answer costs: as much as the model its entry names, else nothing (CAS-14). */
  private priced(entry: CassetteEntry, usage: Usage): { costUsd: number | null; replayOf?: string } {
    if (entry.model === undefined) return { costUsd: 0 };
    this.prices ??= ModelCatalog.load();
    return { costUsd: this.prices.costOf(entry.model, usage), replayOf: entry.model };
  }
}

function maxTokensOf(request: ModelRequest): number | undefined {
  return typeof request.config.maxTokens === 'number' ? request.config.maxTokens : undefined;
}

function matches(entry: CassetteEntry, request: ModelRequest, prompt: string): boolean {
  const match = entry.match;
  if (!match) return true;
  if (match.request !== undefined && match.request !== request.requestName) return false;
  if (match.step !== undefined && match.step !== request.step) return false;
  if (match.contains !== undefined && !prompt.includes(match.contains)) return false;
  return true;
}
