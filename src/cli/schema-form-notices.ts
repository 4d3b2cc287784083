/** The weaker-than-strict schema forms of a run's model calls, each said once per run, model and form (spec/models.md MODEL-17). */
import type { SchemaForm } from '../protocol/model.js';
import type { TraceEvent } from '../protocol/trace/trace.js';
import { knownTraceEvent } from '../protocol/trace/events.js';

/** One fallback from strict mode, as `--json` shows it (`schemaForms`, CLI-4) and progress says it. */
export interface SchemaFormNotice {
  /** The run's id. */
  run: string;
  /** The run's request name. */
  name: string;
  /** The run's model spec. */
  model: string;
  form: Exclude<SchemaForm['form'], 'strict'>;
  reason?: string;
  pointer?: string;
}

const FORM_WORDS: Record<SchemaFormNotice['form'], string> = {
  non_strict: 'the schema is a hint only',
  json_object: 'JSON mode only, the schema in the prompt',
  prompt_only: 'the schema in the prompt only',
};

/** Collects the notices from trace events: `take` answers a notice the first time its run, model and form are seen. */
export class SchemaFormNotices {
  /** Every notice so far, in the order first seen. */
  readonly all: SchemaFormNotice[] = [];
  private readonly runs = new Map<string, { name: string; model: string }>();
  private readonly said = new Set<string>();

  /** The new notice an event brings, if any. */
  take(event: TraceEvent): SchemaFormNotice | undefined {
    const known = knownTraceEvent(event);
    if (known?.event === 'run.started') {
      this.runs.set(event.run, { name: known.name, model: known.model ?? 'no model' });
      return undefined;
    }
    if (known?.event !== 'model.request' && known?.event !== 'model.response') return undefined;
    const schemaForm = known.schemaForm;
    if (schemaForm === undefined || schemaForm.form === 'strict') return undefined;
    const run = this.runs.get(event.run) ?? { name: event.run, model: known.event === 'model.response' ? known.model : 'its model' };
    const key = JSON.stringify([event.run, run.model, schemaForm.form]);
    if (this.said.has(key)) return undefined;
    this.said.add(key);
    const notice: SchemaFormNotice = {
      run: event.run,
      name: run.name,
      model: run.model,
      form: schemaForm.form,
      ...(schemaForm.reason === undefined ? {} : { reason: schemaForm.reason }),
      ...(schemaForm.pointer === undefined ? {} : { pointer: schemaForm.pointer }),
    };
    this.all.push(notice);
    return notice;
  }
}

/** A notice as one progress line: `strict mode off for producer on openai:gpt-4.1: #/properties/output is …`. */
export function noticeLine(notice: SchemaFormNotice): string {
  const why =
    notice.form === 'non_strict' ? (notice.reason ?? FORM_WORDS.non_strict) : `${FORM_WORDS[notice.form]}${notice.reason ? ` (${notice.reason})` : ''}`;
  return `strict mode off for ${notice.name} on ${notice.model}: ${why}`;
}
