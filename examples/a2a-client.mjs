// An A2A client of `delegate-serve --a2a`, written with the official SDK: resolves an agent's card, sends it a message with a data
// part and prints the output. `node examples/a2a-client.mjs http://127.0.0.1:8789/a2a/plan/welcome` reaches a
// `delegate-serve requests --a2a --port 8789`.
import { ClientFactory } from '@a2a-js/sdk/client';

const base = process.argv[2] ?? 'http://127.0.0.1:8789/a2a/plan/welcome';
// The card is at <base>/.well-known/agent-card.json: the base ends with `/` so the resolver looks below it.
const client = await new ClientFactory().createFromUrl(base.endsWith('/') ? base : `${base}/`);
const card = await client.getAgentCard();
console.log(`${card.name}: ${card.description}`);
const message = {
  messageId: crypto.randomUUID(),
  role: 1, // ROLE_USER
  parts: [{ content: { $case: 'data', value: { name: 'Ada' } }, mediaType: 'application/json' }],
};
const task = await client.sendMessage({ message });
const output = task.artifacts?.[0]?.parts?.[0]?.content;
console.log(task.status?.state === 3 ? JSON.stringify(output?.value) : `task ended in state ${task.status?.state}`);
if (task.status?.state !== 3) process.exitCode = 1; // TASK_STATE_COMPLETED
