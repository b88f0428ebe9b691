/**
 * Folding one observation (a call reply, a poll, a webhook, a person, a timer) into
 * an operation's status. Pure: the engine stores what this decides.
 *
 * Rules (docs/ARCHITECTURE.md, The life of an operation, AdCP spec, task status and webhooks):
 * - a terminal status never changes; the first terminal observation wins;
 * - a later, different terminal observation is a conflict: recorded, nothing changes;
 * - the same terminal again is a duplicate: acknowledged, nothing changes;
 * - a non-terminal observation older than the last one applied is stale: ignored;
 * - a transition the table does not allow is refused.
 */
import { canTransition, isTerminal, type OperationStatus } from './status.js';

export type EventSource = 'call' | 'webhook' | 'poll' | 'reconcile' | 'user' | 'timer';

export interface Observation {
  status: OperationStatus;
  source: EventSource;
  /** When the sender says this status was true (webhook/poll `timestamp`), epoch ms. */
  observedAt?: number;
}

export type Decision =
  | { kind: 'transition'; from: OperationStatus; to: OperationStatus }
  /** Same non-terminal status again: refresh data (progress, message), no status event. */
  | { kind: 'same' }
  | { kind: 'duplicate_terminal' }
  | { kind: 'conflict'; kept: OperationStatus; observed: OperationStatus }
  | { kind: 'stale' }
  | { kind: 'illegal'; from: OperationStatus; to: OperationStatus };

export function decide(current: OperationStatus, lastObservedAt: number | null, obs: Observation): Decision {
  if (isTerminal(current)) {
    if (obs.status === current) return { kind: 'duplicate_terminal' };
    if (isTerminal(obs.status)) return { kind: 'conflict', kept: current, observed: obs.status };
    // A non-terminal report after the end is old news by definition.
    return { kind: 'stale' };
  }
  if (
    !isTerminal(obs.status) &&
    obs.observedAt !== undefined &&
    lastObservedAt !== null &&
    obs.observedAt < lastObservedAt
  ) {
    return { kind: 'stale' };
  }
  if (obs.status === current) return { kind: 'same' };
  if (!canTransition(current, obs.status)) return { kind: 'illegal', from: current, to: obs.status };
  return { kind: 'transition', from: current, to: obs.status };
}
