/** Judging a call, and its result, against its tool: the fixed meta-properties, the parameters' schema, the `_output` schema. */
import { CallError } from '../errors.js';
import { formatIssues, validateAgainst } from '../schemas.js';
import { checkCallScopes } from '../context/scopes.js';
import { TOOL_META_PROPERTIES, callValidationSchema, metaConst, metaSchema } from '../tools/tools.js';
import type { Call, JsonSchema, ToolSchema } from '../types.js';

/**
 * Fills the tool's fixed meta-properties into the call; a call contradicting one is invalid. The
 * call's `_scopes` are judged first (SCOPE-10, SCOPE-11): a latent call may carry them as a hint.
 */
export function withFixedMeta(call: Call, tool: ToolSchema, latent: boolean): Call {
  checkCallScopes(call, tool, latent);
  for (const key of TOOL_META_PROPERTIES) {
    if (key === '_scopes' && latent) continue;
    if (call[key] !== undefined && metaSchema(tool, key) === undefined) {
      throw new CallError('invalid_params', `The tool "${call._tool}" does not let calls choose ${key}; leave it out.`, { toolName: call._tool });
    }
  }
  const filled: Call = { ...call };
  for (const key of Object.keys(tool.properties ?? {})) {
    if (!key.startsWith('_') || key === '_output') continue;
    const fixed = metaConst(tool, key);
    if (fixed === undefined) continue;
    if (call[key] !== undefined && JSON.stringify(call[key]) !== JSON.stringify(fixed)) {
      throw new CallError(
        'invalid_params',
        `The tool "${call._tool}" fixes ${key} to ${JSON.stringify(fixed)}; the call asked for ${JSON.stringify(call[key])}.`,
      );
    }
    filled[key] = fixed;
  }
  return filled;
}

/** Validates a call's parameters against its tool's schema; a latent call (not `explicit`) of a tool with an `_output` schema must carry its result. */
export function checkParams(call: Call, tool: ToolSchema, explicit: boolean): void {
  const { _output: _latent, ...forValidation } = call;
  // On a tool that declares no _scopes, _scopes that got this far are a latent call's hint (SCOPE-11), judged by checkCallScopes.
  if (metaSchema(tool, '_scopes') === undefined) delete forValidation._scopes;
  const schema = callValidationSchema(call._tool, tool);
  const issues = validateAgainst(schema, forValidation);
  if (issues.length > 0) {
    throw new CallError('invalid_params', `The parameters of "${call._tool}" do not match its schema: ${formatIssues(issues)}`, {
      toolName: call._tool,
      issues,
    });
  }
  if (!explicit && metaSchema(tool, '_output') !== undefined && call._output === undefined) {
    throw new CallError('invalid_params', `The latent tool "${call._tool}" needs its result in _output.`, { toolName: call._tool });
  }
}

/** Validates a call's result against its tool's `_output` schema, when the tool declares one. */
export function checkOutput(schema: JsonSchema | undefined, result: unknown, toolName: string): void {
  if (schema === undefined) return;
  const issues = validateAgainst(schema, result);
  if (issues.length > 0) {
    throw new CallError('output_schema_validation_failed', `The result of "${toolName}" does not match its _output schema: ${formatIssues(issues)}`, {
      toolName,
      issues,
    });
  }
}
