/** The task store of a served agent (A2A-12): the SDK's in-memory store, forgetting its oldest finished tasks past a bound. */
import { type Task, TaskState } from '@a2a-js/sdk';
import { InMemoryTaskStore, type ServerCallContext } from '@a2a-js/sdk/server';

/** How many finished tasks an agent keeps for `GetTask` and `ListTasks` before it forgets the oldest (A2A-12). */
export const MAX_FINISHED_TASKS = 1000;

/** The states after which a served task changes no more. */
const FINISHED_STATES: ReadonlySet<TaskState | undefined> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** The part of the SDK's store this one reaches into: the bucket of a caller's tasks, by id. */
interface ScopedBuckets {
  getBucket(context: ServerCallContext): Map<string, Task> | undefined;
}

/**
 * The SDK's `InMemoryTaskStore`, which keeps every task for the life of the server, bounded
 * (A2A-12): once more than `maxFinished` tasks have finished, the one that finished first is
 * forgotten. A task still running or waiting for input is never forgotten.
 */
export class BoundedTaskStore extends InMemoryTaskStore {
  /** The finished tasks' ids, oldest first, with the call context that saved them (their bucket). */
  private readonly finished = new Map<string, ServerCallContext>();

  constructor(private readonly maxFinished = MAX_FINISHED_TASKS) {
    super();
  }

  override async save(task: Task, context: ServerCallContext): Promise<void> {
    await super.save(task, context);
    if (!FINISHED_STATES.has(task.status?.state)) return;
    this.finished.delete(task.id);
    this.finished.set(task.id, context);
    const buckets = (this as unknown as { _scopedStore: ScopedBuckets })._scopedStore;
    for (const [id, saved] of this.finished) {
      if (this.finished.size <= this.maxFinished) break;
      this.finished.delete(id);
      buckets.getBucket(saved)?.delete(id);
    }
  }
}
