/** A delegated run's label by the call that started it: the tool and a short summary of its parameters (CLI-6, VIEW-12). */
import { isJsonObject, isMetaProperty } from '../protocol/types.js';

/** How many characters of the parameters a label keeps before it cuts them with `…`. */
export const CALL_LABEL_PARAMS = 40;

/**
 * `worker · {"topic":"tides"}`: the tool, then its parameters as one line of JSON without the
 * meta-properties the document fixed (`_delegate`, `_sandboxes`, …), cut to `CALL_LABEL_PARAMS`
 * characters. Parameters that are empty or absent leave the tool alone.
 */
export function callLabel(tool: string, params: unknown): string {
  const shown = isJsonObject(params) ? Object.fromEntries(Object.entries(params).filter(([key]) => !isMetaProperty(key))) : params;
  if (shown === undefined || shown === null || (isJsonObject(shown) && Object.keys(shown).length === 0)) return tool;
  const text = JSON.stringify(shown) ?? '';
  const characters = Array.from(text);
  return `${tool} · ${characters.length <= CALL_LABEL_PARAMS ? text : `${characters.slice(0, CALL_LABEL_PARAMS - 1).join('')}…`}`;
}
