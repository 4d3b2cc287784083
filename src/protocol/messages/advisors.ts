/** Advisors (spec/advisors.md): who speaks when, the shape of an opinion, the `advisors` part of the Solution, votes, and where opinions are kept. */
import type { AnswerCheck } from './handlers.js';
import { parseJson } from '../json.js';
import type { AdvisorMessage } from '../types.js';
import { formatPath } from '../variables/references.js';
import { hasLocalReference, rewriteLocalReferences } from '../tools/tools.js';
import { isJsonObject, type DataMessage, type JsonSchema } from '../types.js';

/** The data kind opinions are kept in, one value per advisor id (ADV-9): `†advisors.riskAnalyst`. */
export const ADVISORS_KIND = 'advisors';
/** The built-in tool that consults an on-demand advisor (ADV-8). */
export const CONSULT_TOOL = 'consult_advisor';
/** The built-in Activity behind {@link CONSULT_TOOL}. */
export const CONSULT_ACTIVITY = '@consult-advisor';

/** The opinion schema of an advisor that gives none (ADV-3). */
const DEFAULT_OPINION: JsonSchema = {
  type: 'object',
  properties: { thought: { type: 'string', description: 'Your assessment, in a few sentences.' } },
  required: ['thought'],
};

const OPINIONS_DESCRIPTION = 'The latest opinion of each advisor, by advisor id.';

/** When an advisor speaks in `advisors` at a step (ADV-4): it must, it must only if the answer ends the run, or it does not. */
export type Speaking = 'must' | 'at-finish' | 'silent';

/** Whether an advisor speaks in the `advisors` part at `step` (ADV-4). */
export function speakingAt(advisor: AdvisorMessage, step: number): Speaking {
  switch (advisor.on) {
    case 'start':
      return step === 0 ? 'must' : 'silent';
    case 'request':
      return 'must';
    case 'finish':
      return 'at-finish';
    default:
      return 'silent';
  }
}

/** What `on` means, in words for the prompt. */
function whenWords(advisor: AdvisorMessage): string {
  switch (advisor.on) {
    case 'start':
      return 'speaks at the first step only';
    case 'request':
      return 'speaks at every step';
    case 'finish':
      return 'speaks in the answer that ends the run (a non-null output), and may speak before';
    default:
      return `on demand: silent unless you consult it with the tool ${CONSULT_TOOL}`;
  }
}

/** An advisor's focus, as the scopes were written, each with its sigil. */
function focusOf(advisor: AdvisorMessage): string[] {
  return (advisor.scopes ?? []).map((scope) => (scope.startsWith('†') ? scope : `†${scope}`));
}

/** The `calls` field of an opinion: the advisor's weighted vote on the tools (ADV-6). */
function votesSchema(toolNames: readonly string[] | undefined): JsonSchema {
  const tools = toolNames === undefined ? 'the tools you may call' : toolNames.length > 0 ? `one of ${toolNames.join(', ')}` : 'none here';
  return {
    type: 'string',
    description: `The advisor's weighted vote on the tools, as inline JSON in a string: an object of tool names (${tools}) to numbers from 0 to 100, e.g. "{\\"deploy\\": 10, \\"delay\\": 95}".`,
  };
}

/** The `$defs` key under which an advisor's own schema is kept when it refers to itself. */
function definitionKey(advisor: AdvisorMessage): string {
  return `advisor_${advisor.id}`;
}

/**
 * The schema of one opinion of an advisor (ADV-3): `id` fixed to the advisor's, `_instance` (one of
 * `instances`) for an instanced advisor when there are instances, the properties of its schema,
 * and an optional `calls` vote; closed. An advisor schema with local references has them
 * rewritten to `#/$defs/advisor_<id>`, which `definitions` then holds.
 */
export function opinionSchema(
  advisor: AdvisorMessage,
  instances: readonly string[],
  toolNames?: readonly string[],
): { schema: JsonSchema; definitions: Record<string, JsonSchema> } {
  const key = definitionKey(advisor);
  const own = (advisor.schema ?? DEFAULT_OPINION) as Record<string, unknown>;
  const referring = hasLocalReference(own);
  const written = (referring ? rewriteLocalReferences(own, `#/$defs/${key}`) : own) as Record<string, unknown>;
  const {
    type: _type,
    properties = {},
    required = [],
    additionalProperties: _closed,
    $defs: _defs,
    description,
    ...rest
  } = written as { properties?: Record<string, JsonSchema>; required?: string[]; description?: string; [keyword: string]: unknown };
  const instanced = advisor.isInstanced === true && instances.length > 0;
  const focus = focusOf(advisor);
  const about = [`The opinion of ${advisor.id}: ${advisor.role}`, focus.length > 0 ? `Focus on ${focus.join(', ')}.` : '', description ?? '']
    .filter(Boolean)
    .join(' ');
  const schema: JsonSchema = {
    ...rest,
    type: 'object',
    description: about,
    properties: {
      id: { const: advisor.id },
      ...(instanced ? { _instance: { enum: [...instances], description: 'The instance this opinion is about.' } } : {}),
      ...properties,
      calls: votesSchema(toolNames),
    },
    required: ['id', ...(instanced ? ['_instance'] : []), ...required],
    additionalProperties: false,
  };
  return { schema, definitions: referring ? { [key]: written as JsonSchema } : {} };
}

/** One opinion an answer may hold: an advisor, and the instance it is about (for an instanced advisor). */
interface Seat {
  advisor: AdvisorMessage;
  instance: string | undefined;
  speaking: Speaking;
}

function seatKey(id: unknown, instance: unknown): string {
  return JSON.stringify([id, instance ?? null]);
}

function seatName(seat: Seat): string {
  return seat.instance === undefined ? seat.advisor.id : `${seat.advisor.id} (instance "${seat.instance}")`;
}

/** The advisors of a context at one step: who may and who must speak, and what the prompt says about them. */
export class Council {
  private readonly seats: Seat[];

  /**
   * @param advisors the context's advisor messages, in order.
   * @param step the model step.
   * @param instances the context's instances.
   * @param toolNames the tools the answer may call (what votes may name).
   */
  constructor(
    readonly advisors: readonly AdvisorMessage[],
    readonly step: number,
    readonly instances: readonly string[],
    readonly toolNames: readonly string[],
  ) {
    this.seats = advisors.flatMap((advisor) => {
      const speaking = speakingAt(advisor, step);
      if (speaking === 'silent') return [];
      const instanced = advisor.isInstanced === true && instances.length > 0;
      return (instanced ? instances : [undefined]).map((instance) => ({ advisor, instance, speaking }));
    });
  }

  /** How many opinions the answer must hold (ADV-4), not counting those due only when it ends the run. */
  get required(): number {
    return this.seats.filter((seat) => seat.speaking === 'must').length;
  }

  /**
   * The `advisors` property of the Solution at this step (ADV-5), with the definitions it refers
   * to; undefined when no advisor speaks in it.
   */
  solutionPart(): { schema: JsonSchema; definitions: Record<string, JsonSchema> } | undefined {
    if (this.seats.length === 0) return undefined;
    const speakers = [...new Set(this.seats.map((seat) => seat.advisor))];
    const definitions: Record<string, JsonSchema> = {};
    const opinions = speakers.map((advisor) => {
      const built = opinionSchema(advisor, this.instances, this.toolNames);
      Object.assign(definitions, built.definitions);
      return built.schema;
    });
    const schema: JsonSchema = {
      type: 'array',
      description:
        'Written first, before your calls: the opinion of each advisor that speaks now, in its role, one per instance for an instanced advisor. Weigh their votes when you choose your calls.',
      items: opinions.length === 1 ? opinions[0] : { anyOf: opinions },
      minItems: this.required,
      maxItems: this.seats.length,
    };
    return { schema, definitions };
  }

  /**
   * The rule of the answer beyond its schema (ADV-5, ADV-6): each opinion once, every advisor that
   * must speak present (those of `on: "finish"` when the answer's output is not null), every vote
   * inline JSON of known tools to numbers from 0 to 100.
   */
  readonly check: AnswerCheck = (answer) => {
    const problems: string[] = [];
    const given = Array.isArray(answer.advisors) ? answer.advisors.filter(isJsonObject) : [];
    const seen = new Set<string>();
    for (const opinion of given) {
      const key = seatKey(opinion.id, opinion._instance);
      const name = typeof opinion._instance === 'string' ? `${String(opinion.id)} (instance "${opinion._instance}")` : String(opinion.id);
      if (seen.has(key)) problems.push(`advisors holds the opinion of ${name} twice; give each opinion once.`);
      seen.add(key);
      if (typeof opinion.calls === 'string') {
        const votes = parseVotes(opinion.calls, this.toolNames);
        if ('problem' in votes) problems.push(`The opinion of ${name} has calls ${JSON.stringify(opinion.calls)}: ${votes.problem}`);
      }
    }
    const finishing = answer.output !== null && answer.output !== undefined;
    const missing = this.seats.filter(
      (seat) => (seat.speaking === 'must' || (seat.speaking === 'at-finish' && finishing)) && !seen.has(seatKey(seat.advisor.id, seat.instance)),
    );
    if (missing.length > 0) {
      problems.push(
        `advisors lacks the opinion of ${missing.map(seatName).join(', ')}: ${finishing ? 'at this step, and in an answer that ends the run, ' : 'at this step '}they must speak, first, before the calls.`,
      );
    }
    return problems;
  };

  /** The instruction that introduces the advisors to the model (ADV-7). */
  instruction(): string {
    const lines = [
      '## Advisors',
      'Advisors are lenses you adopt before you act. When advisors speak, begin your answer with `advisors`: one opinion per advisor (per instance, with its `_instance`, for an instanced one), written in that advisor\'s role and shaped by its schema, with its weighted vote on the tools in `calls` as inline JSON, e.g. "{\\"deploy\\": 10, \\"delay\\": 95}" (0 to 100 each). Then weigh their votes to choose your calls.',
    ];
    for (const advisor of this.advisors) {
      const focus = focusOf(advisor);
      const focusText = focus.length > 0 ? ` Focus on ${focus.join(', ')} (a focus, not a limit: everything stays readable).` : '';
      lines.push(`- ${advisor.id} (${whenWords(advisor)}${advisor.isInstanced ? '; one opinion per instance' : ''}): ${advisor.role}${focusText}`);
    }
    const now = [...new Set(this.seats.filter((seat) => seat.speaking === 'must').map((seat) => seat.advisor.id))];
    const atFinish = [...new Set(this.seats.filter((seat) => seat.speaking === 'at-finish').map((seat) => seat.advisor.id))];
    const said = [
      now.length > 0 ? `${now.join(', ')} must speak now` : '',
      atFinish.length > 0 ? `${atFinish.join(', ')} must speak if this answer ends the run` : '',
    ].filter(Boolean);
    if (said.length > 0) lines.push(`At this step: ${said.join('; ')}.`);
    return lines.join('\n');
  }
}

/**
 * Reads an opinion's vote (ADV-6): inline JSON of an object whose keys are tools the answer may
 * call (`toolNames`; any name when undefined) and whose values are numbers from 0 to 100.
 */
export function parseVotes(text: string, toolNames?: readonly string[]): { votes: Record<string, number> } | { problem: string } {
  const parsed = parseJson(text);
  if (!parsed.ok) return { problem: `it is not inline JSON (${parsed.message})` };
  if (!isJsonObject(parsed.value)) return { problem: 'expected an object of tool names to numbers from 0 to 100.' };
  const known = toolNames === undefined ? undefined : new Set(toolNames);
  for (const [tool, weight] of Object.entries(parsed.value)) {
    if (known && !known.has(tool)) {
      return { problem: `it votes for "${tool}", which is not a tool here (tools: ${[...known].join(', ') || 'none'}).` };
    }
    if (typeof weight !== 'number' || !(weight >= 0 && weight <= 100)) {
      return { problem: `it gives "${tool}" ${JSON.stringify(weight)}; a vote is a number from 0 to 100.` };
    }
  }
  return { votes: parsed.value as Record<string, number> };
}

/** The vote of an opinion already judged valid, or `null` when it gives none (for the trace). */
export function votesOf(opinion: Record<string, unknown>): Record<string, number> | null {
  if (typeof opinion.calls !== 'string') return null;
  const read = parseVotes(opinion.calls);
  return 'votes' in read ? read.votes : null;
}

/** The write that keeps an opinion (ADV-9): data of kind `advisors` at the advisor's id, for its instance if any. */
export function opinionWrite(advisor: string, opinion: Record<string, unknown>, instance: string | undefined): DataMessage {
  return {
    type: 'data',
    kind: ADVISORS_KIND,
    data: opinion,
    description: OPINIONS_DESCRIPTION,
    _path: formatPath([advisor]),
    _outputMethod: 'set',
    _date: new Date().toISOString(),
    ...(instance === undefined ? {} : { _instance: instance }),
  };
}
