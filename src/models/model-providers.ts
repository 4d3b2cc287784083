/** The provider registry: builds a Model from a spec `<provider>:<model>` by its prefix (replay, openai, anthropic, and any registered). */
import { resolve } from 'node:path';
import { UsageError } from '../protocol/errors.js';
import type { Model, ModelFactory, ModelFactoryOptions } from '../protocol/model.js';
import { AnthropicModel } from './anthropic.js';
import { modelTimeoutFromEnv, type LiveModelOptions } from './live-model-options.js';
import { ModelCatalog } from './model-catalog.js';
import { OpenAIModel } from './openai.js';
import { CassetteRecorder, RecordingModel } from './recording.js';
import { ReplayModel } from './replay.js';
import type { RetryOptions } from './retry.js';

/** The time limits and retries a live model gets from the factory options (MODEL-2, MODEL-3). */
function liveOptions(factoryOptions: ModelFactoryOptions, retry: RetryOptions | undefined): Pick<LiveModelOptions, 'timeoutMs' | 'idleTimeoutMs' | 'retry'> {
  const timeoutMs = factoryOptions.timeoutMs ?? modelTimeoutFromEnv(factoryOptions.env);
  const maxRetries = factoryOptions.maxRetries ?? retry?.maxRetries;
  return {
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(factoryOptions.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: factoryOptions.idleTimeoutMs }),
    retry: { ...retry, ...(maxRetries === undefined ? {} : { maxRetries }) },
  };
}

/** Options of a provider registry. */
export interface ModelProvidersOptions {
  /** Prices for the `costUsd` of live answers and of replayed ones that name their model (CAS-14); the shipped models.json (plus DELEGATE_MODELS) by default. */
  registry?: ModelCatalog;
  /** Retry policy of the live providers. */
  retry?: RetryOptions;
  /** Register `replay:`, `openai:` and `anthropic:` (default true). */
  builtins?: boolean;
}

/**
 * Model providers by prefix: `create('openai:gpt-4.1-mini', options)` hands `gpt-4.1-mini` to the
 * factory registered for `openai`. With `options.record`, live models are wrapped so that their
 * answers are written to that cassette (one shared recorder per file).
 */
export class ModelProviders {
  /** The model catalog the built-in live providers price their answers with (named `registry` for compatibility). */
  readonly registry: ModelCatalog;
  private readonly factories = new Map<string, ModelFactory>();
  private readonly recorders = new Map<string, CassetteRecorder>();

  constructor(options: ModelProvidersOptions = {}) {
    this.registry = options.registry ?? ModelCatalog.load();
    if (options.builtins === false) return;
    const registry = this.registry;
    this.register('replay', (name, factoryOptions) => ReplayModel.fromFileSync(resolve(factoryOptions.cwd, name), { prices: registry }));
    this.register(
      'openai',
      (name, factoryOptions) =>
        new OpenAIModel({ model: name, env: factoryOptions.env, baseUrl: factoryOptions.baseUrl, registry, ...liveOptions(factoryOptions, options.retry) }),
    );
    this.register(
      'anthropic',
      (name, factoryOptions) => new AnthropicModel({ model: name, env: factoryOptions.env, registry, ...liveOptions(factoryOptions, options.retry) }),
    );
  }

  /** Registers (or replaces) the factory of a prefix, given with or without its colon. */
  register(prefix: string, factory: ModelFactory): this {
    this.factories.set(prefix.replace(/:$/, ''), factory);
    return this;
  }

  /** The registered prefixes, each with its colon. */
  prefixes(): string[] {
    return [...this.factories.keys()].map((prefix) => `${prefix}:`);
  }

  /** The registered prefixes, each with its colon: the `list` every registry has. */
  list(): string[] {
    return this.prefixes();
  }

  /** True when a factory is registered for the prefix (given with or without its colon). */
  has(prefix: string): boolean {
    return this.factories.has(prefix.replace(/:$/, ''));
  }

  /** The factory of a prefix (given with or without its colon). */
  get(prefix: string): ModelFactory | undefined {
    return this.factories.get(prefix.replace(/:$/, ''));
  }

  /** Builds the model of a spec `<prefix>:<name>`; an unknown prefix is a UsageError listing the known ones. */
  create(spec: string, options: ModelFactoryOptions): Model {
    const colon = spec.indexOf(':');
    const prefix = colon < 0 ? '' : spec.slice(0, colon);
    const name = colon < 0 ? '' : spec.slice(colon + 1);
    const factory = this.factories.get(prefix);
    if (!factory || name === '') {
      const known = this.prefixes().join(', ');
      const why = colon < 0 ? 'it has no provider prefix' : !factory ? `the provider "${prefix}:" is unknown` : 'it names no model';
      throw new UsageError(`Cannot use the model "${spec}": ${why}. Write <provider>:<model> with one of the known providers: ${known}.`, {
        available: this.prefixes(),
      });
    }
    const model = factory(name, options);
    if (!options.record || prefix === 'replay') return model;
    const path = resolve(options.cwd, options.record);
    let recorder = this.recorders.get(path);
    if (!recorder) {
      recorder = new CassetteRecorder(path);
      this.recorders.set(path, recorder);
    }
    return new RecordingModel(model, recorder);
  }
}
