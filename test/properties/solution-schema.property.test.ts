/** Property test of the Solution schema: the runtime accepts a model answer exactly when it validates against the composed schema it sent. */
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { Activity } from '../../src/protocol/contracts.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { JsonSchema } from '../../src/protocol/types.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(50);

type SimpleType = 'string' | 'integer' | 'number' | 'boolean';
const SIMPLE_TYPES: SimpleType[] = ['string', 'integer', 'number', 'boolean'];

/** How a generated tool is executed. */
type ToolKind =
  | 'latent' // latent with an `_output` schema: the model must fill `_output`
  | 'latentBare' // latent without `_output`
  | 'activity' // an Activity registered under the tool's name
  | 'namedActivity' // `_activity` names a registered Activity
  | 'activityWithOutput'; // an Activity-backed tool that declares `_output` (hidden from the model)

interface ToolSpec {
  name: string;
  kind: ToolKind;
  params: { name: string; type: SimpleType; required: boolean }[];
  outputType: SimpleType;
}

const TOOL_NAMES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
const PARAM_NAMES = ['p', 'q', 'r'];

const toolSpecs: fc.Arbitrary<ToolSpec[]> = fc.uniqueArray(fc.constantFrom(...TOOL_NAMES), { minLength: 1, maxLength: 4 }).chain((names) =>
  fc.tuple(
    ...names.map((name) =>
      fc.record({
        name: fc.constant(name),
        kind: fc.constantFrom<ToolKind>('latent', 'latentBare', 'activity', 'namedActivity', 'activityWithOutput'),
        params: fc
          .uniqueArray(fc.constantFrom(...PARAM_NAMES), { maxLength: 3 })
          .chain((params) =>
            fc.tuple(...params.map((param) => fc.record({ name: fc.constant(param), type: fc.constantFrom(...SIMPLE_TYPES), required: fc.boolean() }))),
          ),
        outputType: fc.constantFrom(...SIMPLE_TYPES),
      }),
    ),
  ),
);

/** A value of a type (integers are valid numbers too). */
const valuesFor = (type: SimpleType): fc.Arbitrary<unknown> => {
  switch (type) {
    case 'string':
      // Never a `†…` string: that is a reference, which the model schema also accepts.
      return fc.stringMatching(/^[a-z ]{0,8}$/);
    case 'integer':
      return fc.integer({ min: -50, max: 50 });
    case 'number':
      return fc.oneof(fc.integer({ min: -50, max: 50 }), fc.double({ min: -50, max: 50, noNaN: true, noDefaultInfinity: true }));
    case 'boolean':
      return fc.boolean();
  }
};

/** A value that is not of a type. */
const wrongValueOf = (type: SimpleType): fc.Arbitrary<unknown> => {
  switch (type) {
    case 'string':
      return fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant([1]));
    case 'integer':
      return fc.oneof(fc.constant(1.5), fc.constant('7'), fc.boolean(), fc.constant({}));
    case 'number':
      return fc.oneof(fc.constant('3'), fc.boolean(), fc.constant(null));
    case 'boolean':
      return fc.oneof(fc.constant('true'), fc.integer({ min: 0, max: 1 }), fc.constant(null));
  }
};

/** The Request's output schemas and values for them. */
const OUTPUTS: { schema: JsonSchema; valid: fc.Arbitrary<unknown>; invalid: fc.Arbitrary<unknown> }[] = [
  { schema: { type: 'string' }, valid: fc.constantFrom('done', 'ok'), invalid: fc.oneof(fc.integer(), fc.boolean(), fc.constant({})) },
  {
    schema: { type: 'integer', minimum: 0 },
    valid: fc.nat({ max: 99 }),
    invalid: fc.oneof(fc.integer({ min: -9, max: -1 }), fc.constant('3'), fc.constant(2.5)),
  },
  {
    schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    valid: fc.boolean().map((ok) => ({ ok })),
    invalid: fc.oneof(fc.constant({}), fc.constant({ ok: 'yes' }), fc.constant([true]), fc.constant('ok')),
  },
];

/** What was wrong with a generated call, when anything was (the intended verdict, checked against ajv too). */
type Defect = 'none' | 'wrongType' | 'unknownTool' | 'missingOutput' | 'wrongOutput' | 'missingRequired' | 'badOutputPath';

interface Candidate {
  solution: { calls: Record<string, unknown>[]; output?: unknown; [extra: string]: unknown };
  valid: boolean;
}

function callArbitrary(tools: ToolSpec[]): fc.Arbitrary<{ call: Record<string, unknown>; defect: Defect }> {
  return fc.constantFrom(...tools).chain((tool) => {
    const latentWithOutput = tool.kind === 'latent';
    const required = tool.params.filter((param) => param.required);
    const defects: Defect[] = ['none', 'none', 'unknownTool', 'badOutputPath'];
    if (tool.params.length > 0) defects.push('wrongType');
    if (required.length > 0) defects.push('missingRequired');
    if (latentWithOutput) defects.push('missingOutput', 'wrongOutput');
    return fc
      .record({
        defect: fc.constantFrom(...defects),
        present: fc.tuple(...tool.params.map((param) => (param.required ? fc.constant(true) : fc.boolean()))),
        values: fc.tuple(...tool.params.map((param) => valuesFor(param.type))),
        wrong: fc.tuple(...tool.params.map((param) => wrongValueOf(param.type))),
        victim: fc.nat(),
        output: valuesFor(tool.outputType),
        wrongOutput: wrongValueOf(tool.outputType),
        // An explicit tool's `_output` is hidden from the model; an extra one is still not forbidden.
        extraOutput: fc.boolean(),
        outputPath: fc.constantFrom(undefined, '†state.result', '†state.items[0]'),
      })
      .map(({ defect, present, values, wrong, victim, output, wrongOutput, extraOutput, outputPath }) => {
        const call: Record<string, unknown> = { _tool: defect === 'unknownTool' ? `${tool.name}_nope` : tool.name };
        tool.params.forEach((param, index) => {
          if (present[index]) call[param.name] = values[index];
        });
        if (defect === 'wrongType') {
          const param = tool.params[victim % tool.params.length]!;
          call[param.name] = wrong[tool.params.indexOf(param)];
        }
        if (defect === 'missingRequired') delete call[required[victim % required.length]!.name];
        if (latentWithOutput && defect !== 'missingOutput') call._output = defect === 'wrongOutput' ? wrongOutput : output;
        if (!latentWithOutput && extraOutput) call._output = output;
        if (outputPath !== undefined) call._outputPath = outputPath;
        if (defect === 'badOutputPath') call._outputPath = 'state.result';
        return { call, defect };
      });
  });
}

const scenario = toolSpecs.chain((tools) =>
  fc
    .record({
      tools: fc.constant(tools),
      output: fc.constantFrom(...OUTPUTS),
    })
    .chain(({ tools, output }) =>
      fc.record({
        tools: fc.constant(tools),
        outputSchema: fc.constant(output.schema),
        fallback: output.valid,
        candidate: fc
          .record({
            calls: fc.array(callArbitrary(tools), { maxLength: 3 }),
            outputKind: fc.constantFrom('null', 'null', 'valid', 'invalid'),
            validOutput: output.valid,
            invalidOutput: output.invalid,
            // The wrapper itself: `output` is required and nothing but calls/output is allowed.
            shape: fc.constantFrom('sound', 'sound', 'sound', 'noOutput', 'extraKey'),
          })
          .map(({ calls, outputKind, validOutput, invalidOutput, shape }): Candidate => {
            const outputValue = outputKind === 'null' ? null : outputKind === 'valid' ? validOutput : invalidOutput;
            const solution: Candidate['solution'] = { calls: calls.map(({ call }) => call), output: outputValue };
            if (shape === 'noOutput') delete solution.output;
            if (shape === 'extraKey') solution.notes = 'extra';
            return {
              solution,
              valid: shape === 'sound' && outputKind !== 'invalid' && calls.every(({ defect }) => defect === 'none'),
            };
          }),
      }),
    ),
);

/** The tool message and the Activities of a generated tool set. */
function toolsOf(tools: ToolSpec[]): { message: Record<string, unknown>; activities: Record<string, Activity> } {
  const activities: Record<string, Activity> = {};
  const definitions: Record<string, unknown> = {};
  for (const tool of tools) {
    const properties: Record<string, unknown> = Object.fromEntries(tool.params.map((param) => [param.name, { type: param.type }]));
    const required = tool.params.filter((param) => param.required).map((param) => param.name);
    const definition: Record<string, unknown> = { description: `The ${tool.name} tool.`, properties, ...(required.length > 0 ? { required } : {}) };
    const result = tool.outputType === 'string' ? 'r' : tool.outputType === 'boolean' ? true : 1;
    if (tool.kind === 'latent' || tool.kind === 'activityWithOutput') definition._output = { type: tool.outputType };
    if (tool.kind === 'activity' || tool.kind === 'activityWithOutput') activities[tool.name] = () => result;
    if (tool.kind === 'namedActivity') {
      definition._activity = 'shared';
      activities.shared = () => 'shared result';
    }
    definitions[tool.name] = definition;
  }
  return { message: { type: 'tool', tool: definitions }, activities };
}

const ajv = new Ajv2020({ strict: false });

describe('the composed Solution schema', () => {
  it('is the judge: the runtime accepts a candidate answer without a re-ask exactly when ajv validates it against the schema it sent', async () => {
    const tally = { accepted: 0, rejected: 0 };
    await fc.assert(
      fc.asyncProperty(scenario, async ({ tools, outputSchema, fallback, candidate }) => {
        const { message, activities } = toolsOf(tools);
        const runtime = new Runtime({ activities });
        const document = runtime.validate({ meta: { name: 'judge' }, context: [{ type: 'system', text: 'Use the tools.' }, message], schema: outputSchema });
        const model = new ReplayModel([
          { match: { step: 0 }, solution: candidate.solution },
          { match: { step: 0 }, solution: { calls: [], output: fallback } },
          { match: { step: 1 }, solution: { calls: [], output: fallback }, repeat: true },
        ]);
        const sink = memorySink();
        const result = await runtime.run(document, { model, tracer: new Tracer([sink]), maxSteps: 3 });
        expect(result.ok).toBe(true);

        const requests = sink.events.filter((event) => event.event === 'model.request');
        const schema = requests[0]?.schema as object;
        const verdict = ajv.validate(schema, candidate.solution);
        const stepZero = model.requests.filter((request) => request.step === 0);
        const accepted = stepZero.length === 1 && !stepZero[0]!.messages.some((m) => m.content.includes('does not match the Solution schema'));
        expect(accepted).toBe(verdict);
        // The schema also says what the generator meant: every defect is refused, every sound answer accepted.
        expect(verdict).toBe(candidate.valid);
        if (!accepted) {
          const reask = model.requests[1]!;
          expect(reask.step).toBe(0);
          expect(reask.messages.at(-1)?.content).toMatch(/does not match the Solution schema/);
        }
        tally[accepted ? 'accepted' : 'rejected'] += 1;
      }),
      settings,
    );
    // Both outcomes occur at the default run count, so the property is not vacuous.
    if (settings.numRuns >= 20) {
      expect(tally.accepted).toBeGreaterThan(0);
      expect(tally.rejected).toBeGreaterThan(0);
    }
  });
});
