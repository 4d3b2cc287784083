// A model that answers each step with the next scripted Solution and keeps every request it was sent.
import type { Model, ModelRequest, ModelResponse } from '../../src/protocol/model.js';

/** A model answering step n with `answers[n]` (the last one for later steps). */
export function stepModel(...answers: ((request: ModelRequest) => unknown)[]): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    id: 'scripted:steps',
    requests,
    async generate(request): Promise<ModelResponse> {
      requests.push(request);
      const answer = answers[Math.min(request.step, answers.length - 1)];
      if (!answer) throw new Error('No answer scripted.');
      return answered(answer(request), 'scripted');
    },
  };
}

/** A model's response carrying `solution` as written, with flat token usage: what the test models answer. */
export function answered(solution: unknown, model: string, tokens = { inputTokens: 1, outputTokens: 1 }, costUsd = 0): ModelResponse {
  return {
    text: JSON.stringify(solution),
    solution,
    model,
    usage: { ...tokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd,
  };
}
