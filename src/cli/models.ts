/** `delegate-run models`: the models the catalog knows, with tier, delegation, context window, price and the price's source (spec/cli.md CLI-32, spec/models.md MODEL-18). */
import type { ModelCatalog, ModelPrice } from '../models/model-catalog.js';
import { ProtocolError, UsageError } from '../protocol/errors.js';
import { parseCommandLine, subcommandArguments } from './command-line.js';
import { type ReportIo, subcommandCatalog } from './report/report.js';
import { formatCount, table } from './report/text-table.js';

/** Bad usage or a models file that is not valid (CLI-5). */
const USAGE_EXIT = 2;

/** The usage text of the subcommand. */
export const MODELS_USAGE = `Usage: delegate-run models [options]

Lists the models of the model catalog (the shipped models.json, then DELEGATE_MODELS or --models):
each one's tier, whether it may delegate, its context window, and its price in US dollars per
million tokens (input, output, cached input, cache write) with where the price comes from: the
maintained price source shipped with delegate-run (genai-prices), or a models.json that overrides it.

Options:
  --json                   print {"models":[…]} on stdout and nothing else there
  --models <models.json>   merge this file over the shipped models.json (instead of DELEGATE_MODELS)
  -h, --help               this text
  --version                print the package's version
`;

interface ModelsArguments {
  json: boolean;
  models?: string;
}

function parseModelsArguments(argv: string[]): ModelsArguments | 'help' | 'version' {
  const { values, positionals } = parseCommandLine({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, models: { type: 'string' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
  });
  if (values.help) return 'help';
  if (values.version) return 'version';
  if (positionals.length > 0) throw new UsageError(`delegate-run models takes no file, got: ${positionals.join(' ')}.`);
  return { json: values.json ?? false, ...(values.models === undefined ? {} : { models: values.models }) };
}

/** One model as `delegate-run models --json` prints it (CLI-32). */
export interface ModelRow {
  model: string;
  tier: string | null;
  can_delegate: boolean;
  contextWindow: number | null;
  /** US dollars per million tokens; `null` when no price is known (its cost is then unknown). */
  price: Required<ModelPrice> | null;
  /** The price once a call's input passes `aboveInputTokens` (long-context rates), when the source has one. */
  longContext: { aboveInputTokens: number; price: Required<ModelPrice> } | null;
  /** `genai-prices <version>` or `models.json`; `null` with no price. */
  source: string | null;
}

/** Every price field, a cached or cache-write price that is not stated being the input price (MODEL-18). */
function complete(price: ModelPrice): Required<ModelPrice> {
  return { input: price.input, output: price.output, cacheRead: price.cacheRead ?? price.input, cacheWrite: price.cacheWrite ?? price.input };
}

/** The rows of the catalog's models, in its order (MODEL-18). */
export function modelRows(catalog: ModelCatalog): ModelRow[] {
  return catalog.list().map((model) => {
    const priced = catalog.priceOf(model);
    return {
      model,
      tier: catalog.tierOf(model) ?? null,
      can_delegate: catalog.canDelegate(model),
      contextWindow: catalog.contextWindowOf(model) ?? null,
      price: priced ? complete(priced.price) : null,
      longContext: priced?.longContext ? { aboveInputTokens: priced.longContext.aboveInputTokens, price: complete(priced.longContext.price) } : null,
      source: priced?.source ?? null,
    };
  });
}

/** A price per million tokens as printed: at least two decimals, as many as it has up to six (`0.125`, `0.40`). */
function formatPrice(value: number): string {
  const exact = Number(value.toFixed(6)).toString();
  const decimals = exact.split('.')[1]?.length ?? 0;
  return value.toFixed(Math.max(2, decimals));
}

function priceCells(price: Required<ModelPrice> | null): string[] {
  return price ? [price.input, price.output, price.cacheRead, price.cacheWrite].map(formatPrice) : ['?', '?', '?', '?'];
}

/** The rows as a table; a long-context price is a row of its own under its model's. */
export function formatModelTable(rows: readonly ModelRow[]): string[] {
  const cells: string[][] = [['model', 'tier', 'delegates', 'context', 'input', 'output', 'cached', 'cache write', 'source']];
  for (const row of rows) {
    const context = row.contextWindow === null ? '?' : formatCount(row.contextWindow);
    cells.push([row.model, row.tier ?? '-', row.can_delegate ? 'yes' : 'no', context, ...priceCells(row.price), row.source ?? 'unknown: its cost is unknown']);
    if (row.longContext)
      cells.push([`  above ${formatCount(row.longContext.aboveInputTokens)} input tokens`, '', '', '', ...priceCells(row.longContext.price), '']);
  }
  return table(cells, new Set([3, 4, 5, 6, 7]));
}

/**
 * Runs `delegate-run models` with the arguments after `models`; resolves to the exit status: 0
 * with the table (or `--json`) printed, 2 for bad usage or a models file that is not valid.
 */
export async function modelsMain(argv: string[], io: ReportIo): Promise<number> {
  const say = (line: string) => io.stderr.write(`delegate-run models: ${line}\n`);
  const args = subcommandArguments(() => parseModelsArguments(argv), MODELS_USAGE, io.stdout, say);
  if (typeof args === 'number') return args;
  let rows: ModelRow[];
  try {
    rows = modelRows(subcommandCatalog(io, say, args.models));
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    say(error.message);
    return USAGE_EXIT;
  }
  const lines = args.json ? [JSON.stringify({ models: rows })] : ['Prices in US dollars per million tokens.', ...formatModelTable(rows)];
  io.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
