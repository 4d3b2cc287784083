/** The served agents' task store (A2A-12): the SDK's in-memory store, its oldest finished tasks forgotten past the bound. */
import { type Task, TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { describe, expect, it } from 'vitest';
import { BoundedTaskStore } from '../../src/a2a/bounded-task-store.js';

function task(id: string, state: TaskState): Task {
  return { id, contextId: 'c', status: { state, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [], metadata: undefined };
}

describe('BoundedTaskStore', () => {
  it('forgets the task that finished first once more than the bound have finished, never one still running (A2A-12)', async () => {
    const store = new BoundedTaskStore(2);
    const context = new ServerCallContext();
    await store.save(task('waiting', TaskState.TASK_STATE_INPUT_REQUIRED), context);
    for (const id of ['first', 'second', 'third']) {
      await store.save(task(id, TaskState.TASK_STATE_WORKING), context);
      await store.save(task(id, TaskState.TASK_STATE_COMPLETED), context);
    }
    expect(await store.load('first', context)).toBeUndefined();
    expect((await store.load('second', context))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await store.load('third', context))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await store.load('waiting', context))?.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const listed = await store.list(
      {
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 10,
        pageToken: '',
        historyLength: 0,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      },
      context,
    );
    expect(listed.tasks.map((each) => each.id).sort()).toEqual(['second', 'third', 'waiting']);
  });
});
