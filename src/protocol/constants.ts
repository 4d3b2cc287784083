/** Defaults of the loop and of delegation, gathered in one place. */

/** Model steps a run may take unless told otherwise. */
export const DEFAULT_MAX_STEPS = 16;
/** Delegation depth unless told otherwise (the top run has depth 0). */
export const DEFAULT_MAX_DEPTH = 5;
/** Re-asks of an invalid model answer within one step. */
export const MAX_REASKS = 2;
/**
 * The instruction a run's steps start with when tools are offered: how to answer, how to write
 * calls and references, and what the meta-properties every call may carry mean (MSG-10, MSG-29).
 * Written once and short: every model call pays for it (MSG-24).
 */
export const SOLUTION_INSTRUCTIONS =
  '"calls": the tool calls to make now, each naming its tool in "_tool"; a parameter may be a †reference to a context value ("†input.name"). "_outputPath" is where a call\'s result is written ("†state.result"; "†output" sets the output), "_outputMethod" how it joins what is there (default set), "_reasoningForCall" why the call is made, in one short sentence. "output": null until done; non-null ends the run.';
/** The one message of a step without calls whose context renders nothing at all (MSG-27): a provider needs one. */
export const EMPTY_PROMPT = 'Answer.';
/** Model calls a run tree may have in flight at once (LOOP-16): above an ordinary 100-wide fan-out. */
export const DEFAULT_MAX_CONCURRENCY = 128;
/** Runs a run tree may start, the top run included (DEL-19). */
export const DEFAULT_MAX_RUNS = 2000;

/** The name under which the Delegation Activity is registered (DEL-1). */
export const DELEGATE_ACTIVITY = '@delegate';
