/** The interactive approval prompt: asks at the terminal, one call at a time, with the live tree put aside. */
import { createInterface } from 'node:readline/promises';
import { type ApprovalPrompt, approvalParameters, editedCall } from '../approvals/approval-policy.js';
import type { ConfirmDecision, ConfirmRequest } from '../protocol/contracts.js';
import { parseJson } from '../protocol/json.js';

/** Where the prompt reads and writes. */
export interface PromptStreams {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Runs the questions with the progress view off the screen. */
  aside<T>(work: () => Promise<T>): Promise<T>;
}

class InputClosed extends Error {}

/** Creates the terminal prompt: approve once, for the session, reject with a reason, or edit the parameters. */
export function terminalPrompt(streams: PromptStreams): ApprovalPrompt {
  return (request) =>
    streams.aside(async () => {
      // Opened per prompt and closed after, so a waiting reader never keeps the process alive.
      const lines = createInterface({ input: streams.input, output: streams.output, terminal: false });
      // A cancelled run stops asking: closing the interface ends the question as unanswered.
      const stop = () => lines.close();
      request.signal.addEventListener('abort', stop, { once: true });
      // Input that ends before an answer counts as a rejection, never as a silent approval.
      const closed = new Promise<undefined>((resolve) => lines.once('close', () => resolve(undefined)));
      const ask = async (question: string): Promise<string> => {
        streams.output.write(question);
        const answer = await Promise.race([lines.question(''), closed]);
        if (answer === undefined) throw new InputClosed();
        return answer.trim();
      };
      try {
        return await decide(request, streams, ask);
      } catch (error) {
        if (error instanceof InputClosed) return { decision: 'rejected', reason: 'No answer: the terminal input closed.' };
        throw error;
      } finally {
        request.signal.removeEventListener('abort', stop);
        lines.close();
      }
    });
}

async function decide(request: ConfirmRequest, streams: PromptStreams, ask: (question: string) => Promise<string>): Promise<ConfirmDecision> {
  const where = request.run.depth > 0 ? ` (inside delegate "${request.run.name}")` : '';
  streams.output.write(`\nApproval needed${where}: ${request.toolName} [${request.callId}]\n${JSON.stringify(approvalParameters(request.call), null, 2)}\n`);
  if (typeof request.call._reasoningForCall === 'string') streams.output.write(`Reason given: ${request.call._reasoningForCall}\n`);
  for (;;) {
    const answer = (await ask('[y] approve once  [s] approve for this session  [n] reject  [e] edit  > ')).toLowerCase();
    if (answer === 'y' || answer === 'yes') return { decision: 'approved' };
    if (answer === 's') return { decision: 'approved_session' };
    if (answer === 'n' || answer === 'no') {
      const reason = await ask('Reason (told to the model, may be empty): ');
      return reason ? { decision: 'rejected', reason } : { decision: 'rejected' };
    }
    if (answer === 'e') {
      const text = await ask('New parameters as one line of JSON: ');
      const parsed = parseJson(text);
      if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
        streams.output.write(`Not a JSON object${parsed.ok ? '' : ` (${parsed.message})`}; the call is unchanged.\n`);
        continue;
      }
      return { decision: 'edited', call: editedCall(request.call, parsed.value as Record<string, unknown>) };
    }
  }
}
