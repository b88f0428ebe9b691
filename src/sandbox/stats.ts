/**
 * What the sandbox seller observed, for tests and demos to assert on: how
 * often each idempotency key was called and executed, how often each task was
 * polled (with times), and every webhook delivery attempt.
 */
import type { GovernanceRefusal } from './governance-gate.js';
import type { FireRecord } from './reporting.js';
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

/** One create_media_buy request over MCP, as it reached the seller. */
export interface CreateRequestRecord {
  idempotency_key: string;
  /** The HTTP request body exactly as received. */
  body: string;
  /** Its `params.arguments`, serialized again in the order sent. */
  arguments: string;
  /** Whether its reply was held (sandbox_held_reply). */
  held: boolean;
  /** When the HTTP request arrived (epoch ms). */
  started_at: number;
  /** When its reply was sent in full or the caller went away (epoch ms); absent while in flight. */
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

/** One AdCP tool call the seller answered (over MCP or A2A), in arrival order. */
export interface CallRecord {
  tool: string;
  at: string;
  idempotency_key?: string;
  task_id?: string;
  /** The call's arguments as received (a copy). */
  args: Record<string, unknown>;
  /** Whether the request passed the AdCP schema check (request-check.ts); refused when not. */
  valid: boolean;
  /** Why it did not (JSON pointer and message of each issue). */
  issues?: Array<{ pointer: string; message: string }>;
}

/** One follow-up message on an open A2A task (an answer to input-required / auth-required). */
export interface ContinuationRecord {
  a2a_task_id: string;
  task_id: string;
  message_id: string;
  /** completed | submitted | asked_again | duplicate | refused */
  outcome: string;
  idempotency_key?: string;
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
  /** Every create_media_buy request over MCP, in arrival order. */
  createRequests: CreateRequestRecord[];
  webhooks: WebhookRecord[];
  /** Every AdCP tool call, in order: proof of what did (and did not) reach the seller. */
  calls: CallRecord[];
  continuations: ContinuationRecord[];
  tasks: number;
  jwks: { keys: unknown[] };
  /** create_media_buy calls for governed accounts refused at the governance gate, with the reason. */
  governanceRefusals: GovernanceRefusal[];
  /** Every delivery report fire, with the receiver's answer (reporting.ts). */
  reportFires: FireRecord[];
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
  private readonly createRequests: CreateRequestRecord[] = [];
  private readonly webhooks: WebhookRecord[] = [];
  private readonly calls: CallRecord[] = [];
  private readonly continuations: ContinuationRecord[] = [];

  call(tool: string, args: Record<string, unknown>, issues: ReadonlyArray<{ pointer: string; message: string }> = []): void {
    const record: CallRecord = { tool, at: new Date().toISOString(), args: structuredClone(args), valid: issues.length === 0 };
    if (issues.length > 0) record.issues = issues.map(({ pointer, message }) => ({ pointer, message }));
    if (typeof args.idempotency_key === 'string') record.idempotency_key = args.idempotency_key;
    if (typeof args.task_id === 'string') record.task_id = args.task_id;
    this.calls.push(record);
  }

  continuation(record: Omit<ContinuationRecord, 'at'>): void {
    this.continuations.push({ ...record, at: new Date().toISOString() });
  }

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

  /** Records a create_media_buy request with the span of the HTTP request carrying it. */
  createRequest(key: string, body: string, args: Record<string, unknown>, held: boolean): void {
    const span = currentRequestSpan();
    const record: CreateRequestRecord = { idempotency_key: key, body, arguments: JSON.stringify(args), held, started_at: span?.startedAt ?? Date.now() };
    if (span) span.onEnd.push((at) => (record.ended_at = at));
    else record.ended_at = record.started_at;
    this.createRequests.push(record);
  }

  webhook(record: WebhookRecord): void {
    this.webhooks.push(record);
  }

  snapshot(extra: Pick<SellerStats, 'tasks' | 'jwks' | 'governanceRefusals' | 'reportFires'>): SellerStats {
    // Copies, so a caller holding a snapshot sees a stable picture.
    return structuredClone({
      mediaBuysCreated: this.mediaBuysCreated,
      mediaBuysCreatedByKey: this.mediaBuysCreatedByKey,
      createCallsByKey: this.createCallsByKey,
      replaysByKey: this.replaysByKey,
      pollsByTask: this.pollsByTask,
      pollLog: this.pollLog,
      createRequests: this.createRequests,
      webhooks: this.webhooks,
      calls: this.calls,
      continuations: this.continuations,
      ...extra,
    });
  }
}
