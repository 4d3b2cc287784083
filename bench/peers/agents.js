// The OpenAI Agents SDK side of the fan-out benchmark: agents as tools, over chat completions, tracing off.
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool as agentTool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { WORKLOAD, taskOf } from '../fan-out.js';
import { MODEL } from './vercel.js';

/**
 * The OpenAI Agents SDK (chat completions, tracing off): the orchestrator agent's tool runs the
 * worker agent per task. In the `structured` variant (bench/fan-out.js VARIANTS) the worker answers
 * `{text}` as structured output (`outputType`).
 */
export function agents(url, { variant = 'plain' } = {}) {
  setTracingDisabled(true);
  const model = new OpenAIChatCompletionsModel(new OpenAI({ apiKey: 'not-needed', baseURL: `${url}/v1`, maxRetries: 0 }), MODEL);
  const worker = new Agent({
    name: 'worker',
    instructions: WORKLOAD.workerSystem,
    model,
    ...(variant === 'structured' ? { outputType: z.object({ text: z.string() }) } : {}),
  });
  const task = agentTool({
    name: WORKLOAD.toolName,
    description: WORKLOAD.toolDescription,
    parameters: z.object({ task: z.string() }),
    execute: async ({ task }) => (await run(worker, task)).finalOutput,
  });
  const orchestrator = new Agent({ name: 'orchestrator', instructions: WORKLOAD.orchestratorSystem, model, tools: [task] });
  return { fanOut: () => run(orchestrator, 'Start.'), leaf: async (n) => (await run(worker, taskOf(n))).finalOutput };
}
