#!/usr/bin/env node
// The conformance runner: executes every case of spec/conformance through a delegate-run binary and
// checks its exit status, its --json result and its trace. Plain Node ESM with no dependencies, so
// any implementation can reuse it: set DELEGATE_RUN_BIN (and DELEGATE_SERVE_BIN) to its commands.
// The assertion vocabulary is documented in spec/conformance/README.md.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPOSITORY = resolve(HERE, '..', '..');

/** Splits a command given in an environment variable on whitespace (no quoting: keep paths simple). */
function command(variable, fallback) {
  const text = process.env[variable];
  if (text?.trim()) return text.trim().split(/\s+/);
  return fallback;
}

const RUN_BIN = command('DELEGATE_RUN_BIN', [process.execPath, join(REPOSITORY, 'dist', 'bundle', 'run.js')]);
const SERVE_BIN = command('DELEGATE_SERVE_BIN', [process.execPath, join(REPOSITORY, 'dist', 'bundle', 'serve.js')]);
const MCP_BIN = command('DELEGATE_MCP_BIN', [process.execPath, join(REPOSITORY, 'dist', 'bundle', 'mcp.js')]);
const CONCURRENCY = Math.max(1, Number(process.env.CONFORMANCE_CONCURRENCY ?? 2) || 2);
const DEFAULT_TIMEOUT_MS = 30_000;

/** The environment of every child: no API keys or endpoints, so only replay cassettes can answer. */
function childEnvironment() {
  const env = { ...process.env, NO_COLOR: '1' };
  for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL', 'DELEGATE_MODELS']) delete env[name];
  return env;
}

// ---------------------------------------------------------------------------------------------
// Trace assertions

/** Reads a dotted path (`usage.inputTokens`, `error.code`, `params.items.0`) from a value. */
function pick(value, path) {
  let node = value;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** The text `contains` searches: the event's JSON, then every string inside it as it is (unescaped). */
function searchText(event) {
  const strings = [];
  const visit = (value) => {
    if (typeof value === 'string') strings.push(value);
    else if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(visit);
  };
  visit(event);
  return `${JSON.stringify(event)}\n${strings.join('\n')}`;
}

function list(value) {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Run ids by request name, from the `name` of each `run.started` event. */
function runsByName(events) {
  const runs = new Map();
  for (const event of events) {
    if (event.event !== 'run.started' || typeof event.name !== 'string') continue;
    runs.set(event.name, [...(runs.get(event.name) ?? []), event.run]);
  }
  return runs;
}

/** The indices of the events an assertion (or a `before` target) selects. */
function select(events, runs, selector, texts = events.map(searchText)) {
  const ids = selector.run === undefined ? undefined : new Set(runs.get(selector.run) ?? []);
  const parents = selector.parentRun === undefined ? undefined : new Set(runs.get(selector.parentRun) ?? []);
  const indices = [];
  events.forEach((event, index) => {
    if (selector.event !== undefined && selector.event !== '*' && event.event !== selector.event) return;
    if (ids && !ids.has(event.run)) return;
    if (parents && !parents.has(event.parent)) return;
    if (selector.code !== undefined && (event.code ?? event.error?.code) !== selector.code) return;
    if (selector.containing !== undefined && !list(selector.containing).every((text) => texts[index].includes(text))) return;
    for (const [path, expected] of Object.entries(selector.where ?? {})) {
      if (!isDeepStrictEqual(pick(event, path), expected)) return;
    }
    indices.push(index);
  });
  return indices;
}

function describeSelector(selector) {
  const parts = [selector.event ?? '*'];
  if (selector.run !== undefined) parts.push(`run=${selector.run}`);
  if (selector.parentRun !== undefined) parts.push(`parentRun=${selector.parentRun}`);
  if (selector.code !== undefined) parts.push(`code=${selector.code}`);
  if (selector.where !== undefined) parts.push(`where=${JSON.stringify(selector.where)}`);
  if (selector.containing !== undefined) parts.push(`containing=${JSON.stringify(selector.containing)}`);
  return parts.join(' ');
}

/** Checks one assertion; returns a reason when it fails. */
function checkAssertion(events, texts, runs, assertion) {
  const label = describeSelector(assertion);
  if (assertion.run !== undefined && !runs.has(assertion.run) && (assertion.count ?? 1) !== 0) {
    return `${label}: no run.started names a run "${assertion.run}" (runs: ${[...runs.keys()].join(', ') || 'none'})`;
  }
  const chosen = select(events, runs, assertion, texts);
  if (assertion.count !== undefined && chosen.length !== assertion.count) return `${label}: expected ${assertion.count} event(s), found ${chosen.length}`;
  if (assertion.min !== undefined && chosen.length < assertion.min) return `${label}: expected at least ${assertion.min} event(s), found ${chosen.length}`;
  if (assertion.max !== undefined && chosen.length > assertion.max) return `${label}: expected at most ${assertion.max} event(s), found ${chosen.length}`;

  const contains = list(assertion.contains);
  const has = list(assertion.has);
  const inOrder = list(assertion.containsInOrder);
  const positive = contains.length > 0 || has.length > 0 || inOrder.length > 0;
  const onlyNegative = !positive && assertion.notContains !== undefined;
  const counted = assertion.count !== undefined || assertion.min !== undefined || assertion.max !== undefined;
  if (!counted && !onlyNegative && chosen.length === 0) return `${label}: no such event`;

  const ordered = (text) => {
    let from = 0;
    for (const part of inOrder) {
      const found = text.indexOf(part, from);
      if (found < 0) return false;
      from = found + part.length;
    }
    return true;
  };
  const satisfies = (index) =>
    contains.every((text) => texts[index].includes(text)) &&
    has.every((path) => pick(events[index], path) !== undefined) &&
    ordered(JSON.stringify(events[index]));
  const wanted = JSON.stringify([...contains, ...has.map((path) => `field ${path}`), ...(inOrder.length > 0 ? [`in order: ${inOrder.join(' < ')}`] : [])]);
  if (positive) {
    if (assertion.every) {
      const bad = chosen.find((index) => !satisfies(index));
      if (bad !== undefined) return `${label}: event #${bad} lacks ${wanted}`;
    } else if (!chosen.some(satisfies)) {
      return `${label}: no selected event (of ${chosen.length}) has ${wanted}`;
    }
  }
  for (const text of list(assertion.notContains)) {
    const bad = chosen.find((index) => texts[index].includes(text));
    if (bad !== undefined) return `${label}: event #${bad} contains ${JSON.stringify(text)}`;
  }
  if (assertion.before !== undefined) {
    const later = select(events, runs, assertion.before, texts);
    if (chosen.length === 0 || later.length === 0)
      return `${label}: "before" needs events on both sides (${chosen.length} and ${later.length} for ${describeSelector(assertion.before)})`;
    const last = Math.max(...chosen);
    const first = Math.min(...later);
    if (last > first) return `${label}: event #${last} comes after #${first} (${describeSelector(assertion.before)})`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Running one case

function substitute(text, values) {
  return text.replace(/\{\{(CASE|SERVE|TRACE)\}\}/g, (whole, name) => values[name] ?? whole);
}

/** Starts delegate-serve on a free port for a case; resolves with its origin and a stop function. */
function startServer(folder, env) {
  return new Promise((resolveStart, rejectStart) => {
    const [bin, ...rest] = SERVE_BIN;
    const child = spawn(bin, [...rest, folder, '--port', '0', '--host', '127.0.0.1'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let seen = '';
    let listening = false;
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      rejectStart(new Error(`delegate-serve did not report its URL within 10 s: ${seen.slice(0, 300)}`));
    }, 10_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      if (seen.length < 10_000) seen += chunk;
      const match = listening ? null : /https?:\/\/[^\s/]+/.exec(seen);
      if (match) {
        listening = true;
        clearTimeout(timer);
        const stopped = new Promise((done) => child.once('exit', done));
        const stop = () => {
          child.kill('SIGTERM');
          return stopped;
        };
        resolveStart({ origin: match[0], stop });
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      rejectStart(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      rejectStart(new Error(`delegate-serve exited with ${code}: ${seen.slice(0, 300)}`));
    });
  });
}

/** Reads the JSONL trace; an unparsable line is reported as a problem. */
function readTrace(path, problems) {
  if (!existsSync(path)) {
    problems.push('no trace file was written');
    return [];
  }
  const events = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, index) => {
      if (!line.trim()) return;
      try {
        events.push(JSON.parse(line));
      } catch {
        problems.push(`trace line ${index + 1} is not JSON`);
      }
    });
  return events;
}

/** Polls the trace until an event matches `interrupt`, then sends SIGINT to the child. */
function armInterrupt(child, tracePath, interrupt) {
  const timer = setInterval(() => {
    if (!existsSync(tracePath)) return;
    const events = [];
    for (const line of readFileSync(tracePath, 'utf8').split('\n')) {
      try {
        if (line.trim()) events.push(JSON.parse(line));
      } catch {
        // A line still being written; read it next time.
      }
    }
    const selector = { event: interrupt.afterEvent, where: interrupt.where, run: interrupt.run };
    if (select(events, runsByName(events), selector).length > 0) {
      clearInterval(timer);
      setTimeout(() => child.kill('SIGINT'), interrupt.delayMs ?? 0);
    }
  }, 25);
  return () => clearInterval(timer);
}

/**
 * Runs the delegate-run binary with `args` in `cwd`; resolves with its status and output, or a
 * reason it could not run. `watch(child)` may act on the running child and returns its own stop.
 */
async function execute(args, cwd, env, timeoutMs, watch = () => () => undefined, { binary = RUN_BIN, stdin } = {}) {
  const [bin, ...rest] = binary;
  const child = spawn(bin, [...rest, ...args], { cwd, env, stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  // Lines for the command's standard input (a JSON-RPC conversation with delegate-mcp), then its end.
  if (stdin !== undefined) child.stdin.end(stdin);
  const unwatch = watch(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  let timedOut = false;
  const timeout = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const status = await new Promise((done) => {
    child.once('error', (error) => done({ error }));
    child.once('close', (code, signal) => done({ code, signal }));
  });
  clearTimeout(timeout);
  unwatch();
  if (status.error) return { failure: `cannot start ${bin}: ${status.error.message}` };
  if (timedOut) return { failure: `timed out after ${timeoutMs} ms` };
  return { code: status.code, signal: status.signal, stdout, stderr };
}

/**
 * Checks one of a case's `commands` (a further invocation of the binary, e.g. `report`): its exit
 * status, its stdout (as text, or as one JSON value) and its stderr. `result` is the main run's
 * `--json` result, for `stdoutSameAsResult`. Returns the problems, each prefixed with the command.
 */
async function checkCommand(command, index, folder, env, values, result) {
  const args = (command.args ?? []).map((arg) => substitute(String(arg), values));
  const label = `commands[${index}] (${args.join(' ')})`;
  const extraEnv = Object.fromEntries(Object.entries(command.env ?? {}).map(([name, value]) => [name, substitute(String(value), values)]));
  const stdin = command.stdinLines === undefined ? undefined : command.stdinLines.map((line) => `${substitute(JSON.stringify(line), values)}\n`).join('');
  const binary = command.bin === 'mcp' ? MCP_BIN : RUN_BIN;
  const ran = await execute(args, folder, { ...env, ...extraEnv }, command.timeoutMs ?? DEFAULT_TIMEOUT_MS, undefined, { binary, stdin });
  if (ran.failure) return [`${label}: ${ran.failure}`];
  const problems = [];
  const exit = command.exit ?? 0;
  if (ran.code !== exit)
    problems.push(`exit ${ran.code ?? ran.signal}, expected ${exit}; stderr: ${ran.stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 400)}`);
  for (const text of list(command.stdoutContains)) if (!ran.stdout.includes(text)) problems.push(`stdout lacks ${JSON.stringify(text)}`);
  for (const text of list(command.stdoutNotContains)) if (ran.stdout.includes(text)) problems.push(`stdout contains ${JSON.stringify(text)}`);
  for (const text of list(command.stderrContains)) if (!ran.stderr.includes(text)) problems.push(`stderr lacks ${JSON.stringify(text)}`);
  if (command.stdoutEmpty && ran.stdout !== '') problems.push(`stdout is not empty: ${ran.stdout.slice(0, 200)}`);
  if (command.stdoutLinesWhere !== undefined) {
    const printed = ran.stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        try {
          return JSON.parse(line);
        } catch {
          return undefined;
        }
      });
    for (const where of command.stdoutLinesWhere) {
      const matches = printed.some((line) => line !== undefined && Object.entries(where).every(([path, value]) => isDeepStrictEqual(pick(line, path), value)));
      if (!matches) problems.push(`no stdout line has ${JSON.stringify(where).slice(0, 300)}; stdout: ${ran.stdout.slice(0, 400)}`);
    }
  }
  const wantsJson = ['stdoutJson', 'stdoutWhere', 'stdoutKeys', 'stdoutSameAsResult'].some((check) => command[check] !== undefined);
  if (wantsJson) {
    const lines = ran.stdout.split('\n').filter((line) => line.trim() !== '');
    let printed;
    try {
      if (lines.length !== 1) throw new Error(`${lines.length} lines`);
      printed = JSON.parse(lines[0]);
    } catch (error) {
      problems.push(`stdout is not one JSON line (${error.message}): ${ran.stdout.slice(0, 200)}`);
    }
    if (printed !== undefined) {
      if (command.stdoutJson !== undefined && !isDeepStrictEqual(printed, command.stdoutJson))
        problems.push(`stdout ${JSON.stringify(printed).slice(0, 300)} differs from ${JSON.stringify(command.stdoutJson).slice(0, 300)}`);
      for (const [path, value] of Object.entries(command.stdoutWhere ?? {})) {
        if (!isDeepStrictEqual(pick(printed, path), value))
          problems.push(`stdout has ${path} = ${JSON.stringify(pick(printed, path))}, expected ${JSON.stringify(value)}`);
      }
      for (const [path, keys] of Object.entries(command.stdoutKeys ?? {})) {
        const value = path === '' ? printed : pick(printed, path);
        const actual = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : undefined;
        if (!isDeepStrictEqual(actual, keys))
          problems.push(`stdout has at ${path} the keys ${JSON.stringify(actual)}, expected exactly ${JSON.stringify(keys)}`);
      }
      for (const [path, resultPath] of Object.entries(command.stdoutSameAsResult ?? {})) {
        const mine = pick(printed, path);
        const theirs = result === undefined ? undefined : pick(result, resultPath);
        if (mine === undefined || !isDeepStrictEqual(mine, theirs))
          problems.push(`stdout has ${path} = ${JSON.stringify(mine)}, but the run's result has ${resultPath} = ${JSON.stringify(theirs)}`);
      }
    }
  }
  return problems.map((problem) => `${label}: ${problem}`);
}

async function runCase(name) {
  const folder = join(HERE, name);
  const expected = JSON.parse(readFileSync(join(folder, 'expected.json'), 'utf8'));
  const env = childEnvironment();
  const scratch = mkdtempSync(join(tmpdir(), `conformance-${name}-`));
  const tracePath = join(scratch, 'trace.jsonl');
  let server;
  try {
    const values = { CASE: folder, TRACE: tracePath };
    // A case may set variables of its own (DELEGATE_MODELS naming a models file of the case), for every command it runs.
    for (const [variable, value] of Object.entries(expected.env ?? {})) env[variable] = substitute(String(value), values);
    // A case that only runs its commands (on files it holds), e.g. a report of a stored trace.
    if (expected.run === false) {
      const problems = [];
      for (const [index, command] of (expected.commands ?? []).entries())
        problems.push(...(await checkCommand(command, index, folder, env, values, undefined)));
      return problems;
    }
    if (expected.serve !== undefined) {
      server = await startServer(join(folder, expected.serve), env);
      values.SERVE = server.origin;
    }
    const requestText = substitute(expected.request ?? 'request.json', values);
    const request = /^https?:\/\//.test(requestText) ? requestText : join(folder, requestText);
    const args = [request];
    if (existsSync(join(folder, 'activities.mjs'))) args.push('--activities', join(folder, 'activities.mjs'));
    if (existsSync(join(folder, 'input.json'))) args.push('--input', `@${join(folder, 'input.json')}`);
    args.push('--trace', tracePath, '--json', ...(expected.args ?? []).map((arg) => substitute(String(arg), values)));

    const ran = await execute(args, folder, env, expected.timeoutMs ?? DEFAULT_TIMEOUT_MS, (child) =>
      expected.interrupt ? armInterrupt(child, tracePath, expected.interrupt) : () => undefined,
    );
    if (ran.failure) return [ran.failure];
    const { stdout, stderr } = ran;
    const status = { code: ran.code, signal: ran.signal };

    const problems = [];
    const exit = expected.exit ?? 0;
    if (status.code !== exit)
      problems.push(`exit ${status.code ?? status.signal}, expected ${exit}; stderr: ${stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 400)}`);

    const lines = stdout.split('\n').filter((line) => line.trim() !== '');
    const optional = expected.result === 'optional';
    let result;
    if (lines.length > 0 || !optional) {
      if (lines.length !== 1) problems.push(`--json must print exactly one line on stdout, got ${lines.length}`);
      try {
        result = JSON.parse(lines[lines.length - 1] ?? '');
      } catch {
        problems.push(`stdout is not a JSON result: ${stdout.slice(0, 200)}`);
      }
    }
    if (result) {
      if (typeof result.ok !== 'boolean') problems.push('the --json result has no boolean "ok"');
      if ('output' in expected) {
        if (result.ok !== true) problems.push(`expected an output, got ${JSON.stringify(result.error ?? result).slice(0, 300)}`);
        else if (!isDeepStrictEqual(result.output, expected.output))
          problems.push(`output ${JSON.stringify(result.output).slice(0, 300)} differs from ${JSON.stringify(expected.output).slice(0, 300)}`);
      }
      if (expected.error !== undefined) {
        if (result.ok !== false) problems.push(`expected a failure ${expected.error.code ?? ''}, got ok`);
        else {
          if (expected.error.code !== undefined && result.error?.code !== expected.error.code)
            problems.push(`error code ${result.error?.code}, expected ${expected.error.code}`);
          for (const text of list(expected.error.messageContains)) {
            if (!String(result.error?.message ?? '').includes(text))
              problems.push(`error message lacks ${JSON.stringify(text)}: ${String(result.error?.message).slice(0, 300)}`);
          }
        }
      }
    }
    for (const path of list(expected.resultHas)) if (result && pick(result, path) === undefined) problems.push(`the --json result has no ${path}`);
    for (const [path, value] of Object.entries(expected.resultWhere ?? {})) {
      if (result && !isDeepStrictEqual(pick(result, path), value))
        problems.push(`the --json result has ${path} = ${JSON.stringify(pick(result, path))}, expected ${JSON.stringify(value)}`);
    }
    for (const text of list(expected.stderrContains)) if (!stderr.includes(text)) problems.push(`stderr lacks ${JSON.stringify(text)}`);

    if (expected.trace !== undefined) {
      const events = readTrace(tracePath, problems);
      const texts = events.map(searchText);
      const runs = runsByName(events);
      for (const assertion of expected.trace) {
        const reason = checkAssertion(events, texts, runs, assertion);
        if (reason) problems.push(`trace: ${reason}`);
      }
    }
    for (const [index, command] of (expected.commands ?? []).entries()) problems.push(...(await checkCommand(command, index, folder, env, values, result)));
    return problems;
  } catch (error) {
    return [`runner error: ${error instanceof Error ? error.message : String(error)}`];
  } finally {
    if (server) await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// All cases

function caseNames(filter) {
  const names = readdirSync(HERE)
    .filter((name) => statSync(join(HERE, name)).isDirectory() && existsSync(join(HERE, name, 'expected.json')))
    .sort();
  return filter.length === 0 ? names : names.filter((name) => filter.includes(name));
}

async function main() {
  const names = caseNames(process.argv.slice(2));
  const outcomes = new Map();
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++];
      const expected = JSON.parse(readFileSync(join(HERE, name, 'expected.json'), 'utf8'));
      const problems = await runCase(name);
      outcomes.set(name, { problems, pending: expected.pending });
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, names.length) }, worker));

  let passed = 0;
  let failed = 0;
  let pending = 0;
  for (const name of names) {
    const { problems, pending: reason } = outcomes.get(name);
    if (reason !== undefined) {
      // A known bug: the case states the right behaviour and is expected to fail until it is fixed.
      if (problems.length > 0) {
        pending++;
        console.log(`pend ${name}: ${reason} [still failing: ${problems.join('; ')}]`);
      } else {
        failed++;
        console.log(`FAIL ${name}: marked pending ("${reason}") but passes; remove "pending" from its expected.json`);
      }
    } else if (problems.length === 0) {
      passed++;
      console.log(`ok   ${name}`);
    } else {
      failed++;
      console.log(`FAIL ${name}: ${problems.join('; ')}`);
    }
  }
  if (pending > 0) console.log(`${pending} pending (known bugs, listed in spec/conformance/README.md)`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed > 0 ? 1 : 0;
}

await main();
