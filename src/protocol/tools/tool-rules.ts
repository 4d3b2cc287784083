/** Tool rules (TOOL-21): `config.toolRules` forbids tools or sets their approval by glob on the tool's name, first match wins. */
import { metaConst } from './tools.js';
import type { ToolRule, ToolSchema } from '../types.js';

/** A tool-name glob as a regular expression over the whole name. */
function namePattern(glob: string): RegExp {
  const source = [...glob].map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${source}$`);
}

/** The first rule whose glob matches the name (TOOL-21), if any. */
export function ruleFor(rules: readonly ToolRule[], name: string): ToolRule | undefined {
  return rules.find((rule) => namePattern(rule.tool).test(name));
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
  for (const [name, tool] of [...tools]) {
    const rule = ruleFor(rules, name);
    if (rule === undefined) continue;
    if (rule.allowed === false) tools.delete(name);
    else tools.set(name, withApproval(tool, rule.approval));
  }
}
