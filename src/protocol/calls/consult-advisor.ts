/** The built-in Activity behind `consult_advisor` (ADV-8): keeps a consulted advisor's opinion and traces it. */
import { CONSULT_TOOL, opinionWrite, parseVotes } from '../messages/advisors.js';
import { CallError } from '../errors.js';
import type { Activity } from '../contracts.js';
import { collectTools } from '../tools/tools.js';
import { isJsonObject } from '../types.js';

/**
 * Judges the opinion's vote against the tools its context holds (the tool messages: the consult
 * tool fixes `_scopes` to `tool`), then returns the write that keeps it at `†advisors.<id>` for
 * the call's instance, and traces `advisor.opinion`.
 */
export const consultAdvisor: Activity = (call, _tool, context, environment) => {
  const opinion = call.opinion;
  if (!isJsonObject(opinion) || typeof opinion.id !== 'string') {
    throw new CallError('invalid_params', `${CONSULT_TOOL} needs an opinion with the id of an on-demand advisor.`, { toolName: call._tool });
  }
  const advisor = opinion.id;
  let votes: Record<string, number> | null = null;
  if (typeof opinion.calls === 'string') {
    const read = parseVotes(opinion.calls, [...collectTools(context).keys(), CONSULT_TOOL]);
    if ('problem' in read) {
      throw new CallError('invalid_params', `The opinion of ${advisor} has calls ${JSON.stringify(opinion.calls)}: ${read.problem}`, { toolName: call._tool });
    }
    votes = read.votes;
  }
  environment.trace.emit('advisor.opinion', {
    step: null,
    call: environment.callId,
    advisor,
    instance: environment.instance ?? null,
    opinion,
    votes,
  });
  return opinionWrite(advisor, opinion, environment.instance);
};
