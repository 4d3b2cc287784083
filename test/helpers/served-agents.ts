/** Requests the A2A tests serve beside their own: one whose tool waits until cancelled, one whose tool needs approval, their cassettes and the Activities that log what ran. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes `value` (JSON unless a string) as `name` in `root`. */
export function writeIn(root: string, name: string, value: unknown): void {
  writeFileSync(join(root, name), typeof value === 'string' ? value : JSON.stringify(value));
}

/** A tool run by the Activity of its name, with more properties. */
function activityTool(name: string, properties: Record<string, unknown>) {
  return { type: 'tool', tool: { [name]: { type: 'object', properties: { _activity: { const: name }, ...properties } } } };
}

/**
 * Writes into `root`: `waiter.json` (its `wait` Activity waits a minute or until cancelled),
 * `deployer.json` (its `deploy` call needs approval; its answer afterwards is `deployed`), their
 * cassettes, and `activities.mjs`, whose Activities append `waiting`, `cancelled` and
 * `deployed <target>` to `activity.log` there.
 */
export function writeWaiterAndDeployer(root: string): void {
  writeIn(root, 'waiter.json', {
    meta: { name: 'waiter', description: 'Waits until cancelled.' },
    context: [{ type: 'system', text: 'Wait.' }, activityTool('wait', {})],
    schema: { type: 'string' },
  });
  writeIn(root, 'waiter.cassette.json', {
    version: 1,
    entries: [
      { match: { request: 'waiter', step: 0 }, solution: { calls: [{ _tool: 'wait' }], output: null } },
      { match: { request: 'waiter', step: 1 }, solution: { calls: [], output: 'waited' } },
    ],
  });
  writeIn(root, 'deployer.json', {
    meta: { name: 'deployer', description: 'Deploys, with approval.' },
    context: [{ type: 'system', text: 'Deploy.' }, activityTool('deploy', { _approval: { const: 'required' }, target: { type: 'string' } })],
    schema: { type: 'string' },
  });
  writeIn(root, 'deployer.cassette.json', {
    version: 1,
    entries: [
      { match: { request: 'deployer', step: 0 }, solution: { calls: [{ _tool: 'deploy', target: 'production' }], output: null } },
      { match: { request: 'deployer', step: 1 }, solution: { calls: [], output: 'deployed' } },
    ],
  });
  const log = JSON.stringify(join(root, 'activity.log'));
  writeIn(
    root,
    'activities.mjs',
    `import { appendFileSync } from 'node:fs';
export default {
  wait: (_call, _tool, _context, environment) => new Promise((resolve, reject) => {
    appendFileSync(${log}, 'waiting\\n');
    const timer = setTimeout(() => resolve('slept'), 60000);
    environment.signal.addEventListener('abort', () => { clearTimeout(timer); appendFileSync(${log}, 'cancelled\\n'); reject(new Error('cancelled')); });
  }),
  deploy: (call) => { appendFileSync(${log}, 'deployed ' + call.target + '\\n'); return 'deployed'; },
};
`,
  );
}

/** What the Activities of `writeWaiterAndDeployer`'s folder wrote so far. */
export function activityLog(root: string): string {
  try {
    return readFileSync(join(root, 'activity.log'), 'utf8');
  } catch {
    return '';
  }
}
