// The Vercel AI SDK side of the fan-out benchmark: subagents as tools, each a generateText call, over chat completions.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, Output, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { WORKLOAD, taskOf } from '../fan-out.js';

/** The model name every framework asks the loopback model for. */
export const MODEL = 'gpt-4.1-mini';

/**
 * The Vercel AI SDK: the orchestrator's tool runs a subagent (generateText) per task. In the
 * `structured` variant (bench/fan-out.js VARIANTS) the subagent answers `{text}` as structured
 * output (`Output.object`).
 */
export function vercel(url, { variant = 'plain' } = {}) {
  const model = createOpenAI({ apiKey: 'not-needed', baseURL: `${url}/v1` }).chat(MODEL);
  const worker =
    variant === 'structured'
      ? async (task) =>
          (
            await generateText({
              model,
              system: WORKLOAD.workerSystem,
              prompt: task,
              maxRetries: 0,
              output: Output.object({ schema: z.object({ text: z.string() }) }),
            })
          ).output
      : async (task) => (await generateText({ model, system: WORKLOAD.workerSystem, prompt: task, maxRetries: 0 })).text;
  return {
    fanOut: () =>
      generateText({
        model,
        system: WORKLOAD.orchestratorSystem,
        prompt: 'Start.',
        maxRetries: 0,
        tools: {
          [WORKLOAD.toolName]: tool({
            description: WORKLOAD.toolDescription,
            inputSchema: z.object({ task: z.string() }),
            execute: ({ task }) => worker(task),
          }),
        },
        stopWhen: stepCountIs(5),
      }),
    leaf: (n) => worker(taskOf(n)),
  };
}

/** The fan-out workload on the Vercel AI SDK against the model at `url`: a function running it once. */
export function vercelFanOut(url) {
  return vercel(url).fanOut;
}
