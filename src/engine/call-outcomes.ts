/**
 * What a send's or poll's outcome means for the next step: a reply turned into an
 * observation, which failures count against an agent's breaker, which ones may be
 * sent again with the same key and bytes. Pure functions, shared by the operation
 * service and the answer delivery.
 */
import { AdcpTransportError, type TaskReply } from '../adcp/types.js';
import type { Lease, OperationRow } from '../store/index.js';
import type { TaskObservation } from './observation-plan.js';

export function replyToObservation(reply: TaskReply): Omit<TaskObservation, 'source'> {
  return {
    status: reply.status,
    taskId: reply.taskId,
    contextId: reply.contextId,
    message: reply.message,
    timestamp: reply.timestamp,
    data: reply.data,
    dataJson: reply.dataJson,
    error: reply.error,
    a2a: reply.a2a,
  };
}

/**
 * Failures that say the agent itself is unwell (they count toward opening its breaker).
 * A reply too large to read is not one: the agent is up and answering.
 */
export function isAgentFailure(err: unknown): boolean {
  if (!(err instanceof AdcpTransportError)) return false;
  if (err.kind === 'network' || err.kind === 'timeout') return true;
  return err.kind === 'http' && (err.httpStatus === undefined || err.httpStatus >= 500);
}

/**
 * Whether a failed send goes again with the same key and bytes. An AdCP error decides by
 * its recovery (a code we do not know without one is `transient`, recovery.ts; the caller
 * then gives it no more than the retry budget, see retriesSpentPlan).
 */
export function isRetryableSendFailure(err: AdcpTransportError | undefined): boolean {
  if (!err) return true; // an unexpected exception: we cannot know the send did not leave
  if (err.adcpError?.recovery) return err.adcpError.recovery === 'transient';
  if (err.kind === 'network' || err.kind === 'timeout') return true;
  if (err.kind === 'http') return err.httpStatus === undefined || err.httpStatus === 429 || err.httpStatus >= 500;
  return false;
}

export function leaseOf(row: OperationRow): Lease {
  return { owner: row.lease_owner ?? '', epoch: row.lease_epoch };
}

export function releasedLease(resetAttempts = true) {
  return { lease_owner: null, lease_until: null, ...(resetAttempts ? { attempt: 0 } : {}) };
}

export function errorKind(err: unknown): string {
  return err instanceof AdcpTransportError ? err.kind : 'exception';
}

export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
