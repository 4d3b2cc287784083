/** Defaults of the loop and of delegation, gathered in one place. */

/** Model steps a run may take unless told otherwise. */
export const DEFAULT_MAX_STEPS = 16;
/** Delegation depth unless told otherwise (the top run has depth 0). */
export const DEFAULT_MAX_DEPTH = 5;
/** Re-asks of an invalid model answer within one step. */
export const MAX_REASKS = 2;
/** The instruction every run starts with: how to answer. */
export const SOLUTION_INSTRUCTIONS = [
  'Answer with one JSON object of the form {"calls": [...], "output": ...} that matches the given JSON Schema.',
  '"calls" lists the tool calls to make now (each names its tool in "_tool"; parameters may be †references such as "†input.name" to values in the context; "_outputPath" such as "†state.result" says where a result is written).',
  '"output" stays null until the task is complete; a non-null "output" that matches the output schema ends the run.',
].join(' ');
/** Model calls a run tree may have in flight at once (LOOP-16): above an ordinary 100-wide fan-out. */
export const DEFAULT_MAX_CONCURRENCY = 128;
/** Runs a run tree may start, the top run included (DEL-19). */
export const DEFAULT_MAX_RUNS = 2000;

/** The name under which the Delegation Activity is registered (DEL-1). */
export const DELEGATE_ACTIVITY = '@delegate';
