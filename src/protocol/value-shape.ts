/** The shape of a JSON value as a JSON Schema: what a meta message without a `schema` asks of the model's meta (MSG-23). */
import type { JsonSchema } from './types.js';
import { isJsonObject } from './types.js';

/** Any value but an object or an array: what a `null` (a field not set yet) may become. */
const ANY_SCALAR: JsonSchema = { type: ['string', 'number', 'boolean', 'null'] };

/**
 * The schema of values shaped like `value` (MSG-23): an object keeps exactly its keys, each
 * required and of its value's shape; an array holds items of its items' shape (any scalar when it
 * is empty, any of their shapes when they differ); a string, number or boolean keeps its type;
 * `null` may become any scalar. Values can change, the shape cannot. Every object is closed, so
 * the schema stays within the strict subset providers accept (MODEL-7).
 */
export function shapeOf(value: unknown): JsonSchema {
  if (value === null) return ANY_SCALAR;
  if (Array.isArray(value)) return { type: 'array', items: itemsShape(value) };
  if (isJsonObject(value)) {
    const keys = Object.keys(value);
    return {
      type: 'object',
      properties: Object.fromEntries(keys.map((key) => [key, shapeOf(value[key])])),
      required: keys,
      additionalProperties: false,
    };
  }
  if (typeof value === 'number') return { type: 'number' };
  if (typeof value === 'boolean') return { type: 'boolean' };
  return { type: 'string' };
}

function itemsShape(items: readonly unknown[]): JsonSchema {
  const shapes = new Map<string, JsonSchema>();
  for (const item of items) {
    const shape = shapeOf(item);
    shapes.set(JSON.stringify(shape), shape);
  }
  if (shapes.size === 0) return ANY_SCALAR;
  const distinct = [...shapes.values()];
  return distinct.length === 1 ? (distinct[0] as JsonSchema) : { anyOf: distinct };
}
