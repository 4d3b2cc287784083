/** Tool rules (TOOL-21): `config.toolRules` forbids tools or sets their approval by glob on the tool's name, first match wins. */
import { compileGlob, firstMatches, GlobBudgetError, type GlobMatcher } from './glob-match.js';
import { RequestError } from '../errors.js';
import { metaConst } from './tools.js';
import type { ToolRule, ToolSchema } from '../types.js';

// Each rule's glob is compiled once, by picomatch, and kept with the rule object.
const compiled = new WeakMap<ToolRule, GlobMatcher>();

function matcherOf(rule: ToolRule): GlobMatcher {
  let matcher = compiled.get(rule);
  if (matcher === undefined) {
    matcher = compileGlob(rule.tool, { wildcardsOnly: true });
    compiled.set(rule, matcher);
  }
  return matcher;
}

// What each rule list decided for each name it has seen: rules apply again at every context
// message, and a glob run under the budget costs a timer, so each name is matched once.
const decided = new WeakMap<readonly ToolRule[], Map<string, number>>();

/**
 * For each name, the first rule whose glob matches it (TOOL-21). Globs are picomatch's with only
 * `*` and `?` special; one that takes longer than the glob budget to match (FILES-12) is refused
 * as the document's fault, naming the rule, rather than pinning the CPU.
 */
function rulesFor(rules: readonly ToolRule[], names: readonly string[]): (ToolRule | undefined)[] {
  let known = decided.get(rules);
  if (known === undefined) {
    known = new Map();
    decided.set(rules, known);
  }
  const unseen = [...new Set(names.filter((name) => !known.has(name)))];
  if (unseen.length > 0) {
    let indices: number[];
    try {
      indices = firstMatches(rules.map(matcherOf), unseen);
    } catch (error) {
      if (!(error instanceof GlobBudgetError)) throw error;
      const index = rules.findIndex((rule) => rule.tool === error.glob);
      throw new RequestError([{ document: 'the running Request', pointer: `/config/toolRules/${index}/tool`, message: error.message }]);
    }
    for (const [position, name] of unseen.entries()) known.set(name, indices[position] as number);
  }
  return names.map((name) => rules[known.get(name) as number]);
}

/** The first rule whose glob matches the name (TOOL-21), if any. */
export function ruleFor(rules: readonly ToolRule[], name: string): ToolRule | undefined {
  return rulesFor(rules, [name])[0];
}

/**
 * The tool as a rule leaves it: its `_approval` fixed to `required`, removed for `never`, untouched
 * otherwise; the same object when the rule changes nothing, so applying rules again is a no-op.
 */
function withApproval(tool: ToolSchema, approval: ToolRule['approval']): ToolSchema {
  const current = metaConst(tool, '_approval');
  if (approval === undefined || (approval === 'required' && current === 'required') || (approval === 'never' && tool.properties?._approval === undefined))
    return tool;
  const { _approval: _dropped, ...properties } = tool.properties ?? {};
  return { ...tool, properties: approval === 'required' ? { ...properties, _approval: { const: 'required' } } : properties };
}

/**
 * Applies the rules to the tools in place (TOOL-21): a forbidden tool is removed (not offered, and
 * a call to it is an `unknown_tool`), an approval rule rewrites the tool's `_approval`.
 */
export function applyToolRules(tools: Map<string, ToolSchema>, rules: readonly ToolRule[]): void {
  if (rules.length === 0) return;
  const entries = [...tools];
  const matched = rulesFor(
    rules,
    entries.map(([name]) => name),
  );
  for (const [index, [name, tool]] of entries.entries()) {
    const rule = matched[index];
    if (rule === undefined) continue;
    if (rule.allowed === false) tools.delete(name);
    else tools.set(name, withApproval(tool, rule.approval));
  }
}
