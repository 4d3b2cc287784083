/** A Solution schema like the core composes: calls as a union of tools discriminated by `_tool`, and an output. */

/** Two tools: `synth` (with an optional `_outputPath`) and `mix`. */
export const solutionSchema = {
  type: 'object',
  properties: {
    calls: {
      type: 'array',
      items: {
        anyOf: [
          {
            type: 'object',
            properties: { _tool: { const: 'synth' }, sound: { type: 'string' }, _outputPath: { type: 'string' } },
            required: ['_tool', 'sound'],
            additionalProperties: false,
          },
          {
            type: 'object',
            properties: { _tool: { const: 'mix' }, tracks: { type: 'array', items: { type: 'string' } } },
            required: ['_tool', 'tracks'],
            additionalProperties: false,
          },
        ],
      },
    },
    output: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  },
  required: ['calls', 'output'],
  additionalProperties: false,
};
