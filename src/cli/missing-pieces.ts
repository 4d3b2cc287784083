/** What a run tree needs that the command line did not give, named before the run starts (CLI-30): an Activity no module registers, a model for a delegate when none is chosen. */
import type { DelegatingRuntime } from '../create-runtime.js';
import type { LoadedRequest } from '../protocol/messages/load-request.js';
import { UsageError } from '../protocol/errors.js';
import { metaConst, metaSchema } from '../protocol/tools/tools.js';
import type { RequestDocument, ToolSchema } from '../protocol/types.js';
import { isHttpUrl } from '../resolvers/reference-forms.js';

/** A document of the tree and how it is reached: the tool chain from the top (`producer › compose`). */
interface Reached {
  loaded: LoadedRequest;
  via: string;
}

/** How far below the top the walk reads delegates: the default `--max-depth` (DEL-14). */
const WALK_DEPTH = 5;

/**
 * Walks the top document and the file delegates its tools name (fixed `_delegate` references to
 * `.json` files, directly or through `config.delegates`, from a document that is a file itself:
 * never a URL, which would be fetched, nor an anonymous delegate) and throws one UsageError naming what is
 * missing (CLI-30): every tool whose `_activity` no registered Activity answers, with "pass
 * --activities <module>"; and, when the top run has no model (`noModel` is the text saying how to
 * choose one), the first delegate that needs one. A delegate that cannot be read is left for its
 * call to report, as it would be (DEL-3).
 */
export async function checkMissingPieces(
  runtime: DelegatingRuntime,
  top: LoadedRequest,
  options: { hasModel: boolean; noModel: string; delegatesHere?: boolean },
): Promise<void> {
  const missing: { text: string; activity: string }[] = [];
  let modelless: string | undefined;
  const seen = new Set<string>([top.location]);
  let level: Reached[] = [{ loaded: top, via: top.name }];
  for (let depth = 0; depth <= WALK_DEPTH && level.length > 0; depth++) {
    const next: Reached[] = [];
    for (const { loaded, via } of level) {
      for (const [name, tool] of toolsOf(loaded.document)) {
        for (const activity of activitiesOf(tool)) {
          if (!runtime.hasActivity(activity))
            missing.push({ text: `the tool "${name}" of ${via} (${loaded.location}) needs the Activity "${activity}"`, activity });
        }
        // Delegates that run elsewhere (queued, CLI-24) are checked by the process that runs them.
        if (options.delegatesHere === false) continue;
        const reference = metaConst(tool, '_delegate');
        // Only files are read here: a URL, even one a relative reference or a name leads to, would be fetched.
        const target = typeof reference === 'string' ? (loaded.document.config?.delegates?.[reference] ?? reference) : undefined;
        if (target === undefined || isHttpUrl(loaded.location) || isHttpUrl(target) || !/\.json$/i.test(target)) continue;
        const child = await runtime.resolvers
          .resolve(reference as string, {
            base: loaded.location,
            toolName: name,
            tool,
            ...(loaded.document.config?.delegates ? { delegates: loaded.document.config.delegates } : {}),
          })
          .catch(() => undefined);
        if (child === undefined || seen.has(child.location)) continue;
        seen.add(child.location);
        const reached = { loaded: { document: child.document, location: child.location, name: child.name }, via: `${via} › ${name}` };
        if (!options.hasModel && modelless === undefined && needsModel(child.document)) {
          modelless = `The delegate "${child.name}" (${child.location}), which the tool "${name}" of ${via} runs, needs a model. ${options.noModel}`;
        }
        next.push(reached);
      }
    }
    level = next;
  }
  if (missing.length > 0) {
    const registered = runtime.activities.list();
    const names = [...new Set(missing.map((entry) => entry.activity))].join(', ');
    const sentence = missing.map((entry) => entry.text).join('; ');
    throw new UsageError(
      `${sentence[0]?.toUpperCase()}${sentence.slice(1)}, which no --activities module registers (registered: ${registered.join(', ') || 'none'}). Pass --activities <module> whose default export has ${names}.`,
      { reason: 'missing_activity', activities: [...new Set(missing.map((entry) => entry.activity))] },
    );
  }
  if (modelless !== undefined) throw new UsageError(modelless, { reason: 'no_model' });
}

/** The tools of a document's `tool` messages, the last definition of a name winning (TOOL-4). */
function toolsOf(document: RequestDocument): Map<string, ToolSchema> {
  const tools = new Map<string, ToolSchema>();
  for (const message of document.context) {
    if (message.type !== 'tool') continue;
    for (const [name, tool] of Object.entries((message as { tool: Record<string, ToolSchema> }).tool)) {
      tools.delete(name);
      tools.set(name, tool);
    }
  }
  return tools;
}

/** The Activities a tool's `_activity` may name (TOOL-8, TOOL-17): its `const`, or each of its `enum`; none for a tool without one. */
function activitiesOf(tool: ToolSchema): string[] {
  const fixed = metaConst(tool, '_activity');
  if (typeof fixed === 'string') return [fixed];
  const schema = metaSchema(tool, '_activity');
  const choices = typeof schema === 'object' && schema !== null && Array.isArray(schema.enum) ? schema.enum : [];
  return choices.filter((choice): choice is string => typeof choice === 'string');
}

/**
 * True when a delegate's run needs a model: unless a plan of its own writes `†output` (PLAN-5),
 * its output can only come from a model.
 */
function needsModel(document: RequestDocument): boolean {
  return !document.context.some(
    (message) =>
      message.type === 'plan' &&
      ((message as { calls?: { _outputPath?: unknown }[] }).calls ?? []).some(
        (call) => typeof call._outputPath === 'string' && /^†output\b/.test(call._outputPath),
      ),
  );
}
