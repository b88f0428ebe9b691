/**
 * Asynchronous tasks: a create the seller answers `submitted` is done later,
 * by a timer, and its task then says `completed` with the create's result.
 * The buyer learns it by `tasks/get` (or `tasks/list` when it reconciles), and
 * by the push_notification_config webhook when the request carried one.
 *
 * `completeAfterMs: null` leaves tasks submitted until the test calls
 * `complete(taskId)`, so a test can look at a task while it waits.
 */
import { randomUUID } from 'node:crypto';
import type { PushNotifier, PushRecord } from './push.js';

type Json = Record<string, unknown>;

export interface SellerTask {
  task_id: string;
  task_type: string;
  owner: string;
  status: 'submitted' | 'completed' | 'failed';
  created_at: number;
  updated_at: number;
  push?: Json;
  result?: Json;
  error?: { code: string; message: string };
  /** Does the work; its return value is the task's result. */
  run: () => Json;
}

export class TaskBook {
  private readonly tasks = new Map<string, SellerTask>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly push: PushNotifier,
    private readonly completeAfterMs: number | null,
    private readonly now: () => number = Date.now,
  ) {}

  submit(owner: string, taskType: string, push: Json | undefined, run: () => Json): SellerTask {
    const at = this.now();
    const task: SellerTask = { task_id: `task_${randomUUID()}`, task_type: taskType, owner, status: 'submitted', created_at: at, updated_at: at, run, ...(push ? { push } : {}) };
    this.tasks.set(task.task_id, task);
    if (this.completeAfterMs !== null) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void this.complete(task.task_id);
      }, this.completeAfterMs);
      this.timers.add(timer);
    }
    return task;
  }

  /** Does the task's work now; resolves once its webhook (if any) was answered. */
  async complete(taskId: string): Promise<PushRecord | undefined> {
    const task = this.tasks.get(taskId);
    if (!task || task.status !== 'submitted') return undefined;
    try {
      task.result = task.run();
      task.status = 'completed';
    } catch (err) {
      task.status = 'failed';
      task.error = { code: 'SERVICE_UNAVAILABLE', message: err instanceof Error ? err.message : String(err) };
    }
    task.updated_at = this.now();
    if (!task.push) return undefined;
    const sending = this.push.notify(task.push, {
      task_id: task.task_id,
      task_type: task.task_type,
      status: task.status,
      ...(task.result ? { result: task.result } : {}),
      ...(task.error ? { message: task.error.message } : {}),
    });
    this.inFlight.add(sending);
    try {
      return await sending;
    } finally {
      this.inFlight.delete(sending);
    }
  }

  get(taskId: string, owner?: string): SellerTask | undefined {
    const task = this.tasks.get(taskId);
    return task && (owner === undefined || task.owner === owner) ? task : undefined;
  }

  all(): SellerTask[] {
    return [...this.tasks.values()];
  }

  /** Waits for the notifications being sent. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
