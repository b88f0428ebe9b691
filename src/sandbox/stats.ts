/**
 * What the sandbox seller observed, for tests and demos to assert on: how
 * often each idempotency key was called and executed, how often each task was
 * polled (with times), and every webhook delivery attempt.
 */
import type { GovernanceRefusal } from './governance-gate.js';
import { currentRequestSpan } from './request-span.js';

export interface PollRecord {
  task_id: string;
  tool: string;
  at: string;
  /** When the HTTP request carrying the poll arrived (epoch ms). */
  started_at: number;
  /** When its reply was sent in full or abandoned (epoch ms); absent while still in flight. */
  ended_at?: number;
}

export interface WebhookRecord {
  task_id: string;
  status: string;
  url: string;
  idempotency_key?: string;
  /** 'rfc9421' | 'hmac' | 'bearer' */
  auth: string;
  delivered: boolean;
  dropped: boolean;
  duplicate: boolean;
  attempts: number;
  final_status?: number;
  errors: string[];
  at: string;
}

export interface SellerStats {
  /** Media buys actually created (side effects), over all keys. */
  mediaBuysCreated: number;
  mediaBuysCreatedByKey: Record<string, number>;
  /** Every create_media_buy call that carried the key, replays and errors included. */
  createCallsByKey: Record<string, number>;
  replaysByKey: Record<string, number>;
  pollsByTask: Record<string, number>;
  pollLog: PollRecord[];
  webhooks: WebhookRecord[];
  tasks: number;
  jwks: { keys: unknown[] };
  /** create_media_buy calls for governed accounts refused at the governance gate, with the reason. */
  governanceRefusals: GovernanceRefusal[];
}

const bump = (m: Record<string, number>, k: string): void => {
  m[k] = (m[k] ?? 0) + 1;
};

export class StatsRecorder {
  private mediaBuysCreated = 0;
  private readonly mediaBuysCreatedByKey: Record<string, number> = {};
  private readonly createCallsByKey: Record<string, number> = {};
  private readonly replaysByKey: Record<string, number> = {};
  private readonly pollsByTask: Record<string, number> = {};
  private readonly pollLog: PollRecord[] = [];
  private readonly webhooks: WebhookRecord[] = [];

  createCall(key: string): number {
    bump(this.createCallsByKey, key);
    return this.createCallsByKey[key]!;
  }

  replay(key: string): void {
    bump(this.replaysByKey, key);
  }

  mediaBuyCreated(key: string | undefined): void {
    this.mediaBuysCreated++;
    if (key) bump(this.mediaBuysCreatedByKey, key);
  }

  poll(taskId: string, tool: string): void {
    bump(this.pollsByTask, taskId);
    const span = currentRequestSpan();
    const record: PollRecord = { task_id: taskId, tool, at: new Date().toISOString(), started_at: span?.startedAt ?? Date.now() };
    // Outside an HTTP request (a direct call) the poll is an instant.
    if (span) span.onEnd.push((at) => (record.ended_at = at));
    else record.ended_at = record.started_at;
    this.pollLog.push(record);
  }

  webhook(record: WebhookRecord): void {
    this.webhooks.push(record);
  }

  snapshot(extra: Pick<SellerStats, 'tasks' | 'jwks' | 'governanceRefusals'>): SellerStats {
    // Copies, so a caller holding a snapshot sees a stable picture.
    return structuredClone({
      mediaBuysCreated: this.mediaBuysCreated,
      mediaBuysCreatedByKey: this.mediaBuysCreatedByKey,
      createCallsByKey: this.createCallsByKey,
      replaysByKey: this.replaysByKey,
      pollsByTask: this.pollsByTask,
      pollLog: this.pollLog,
      webhooks: this.webhooks,
      ...extra,
    });
  }
}
