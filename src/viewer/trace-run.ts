/** The shape every fold of a trace gives a run: the progress tree's, the cost tree's and the viewer's runs extend it. */

/** One run of a trace's tree, as each fold of the trace names it (spec/trace.md, spec/viewer.md). */
export interface TraceRun {
  run: string;
  /** The parent run's id; `null` for the top run. */
  parent: string | null;
  /** 0 for the top run, one more per delegation. */
  depth: number;
  /** The request name (DOC-4); the run id until the trace names it. */
  name: string;
  /** The run's model id; `null` when the trace names none. */
  model: string | null;
}
