/** Metrics of an applied observation: transitions, conflicts, and how long approvals and async tasks took. */
import type { OperationStatus } from '../domain/status.js';
import { isTerminal } from '../domain/status.js';
import type { EventRow, OperationRow, Store } from '../store/index.js';
import type { Metrics } from './metrics.js';
import type { ObservationOutcome } from './observation-plan.js';

export async function recordObservationMetrics(
  store: Store,
  metrics: Metrics,
  row: OperationRow,
  events: EventRow[],
  outcome: ObservationOutcome | 'task_type_conflict' | null,
): Promise<void> {
  for (const e of events) {
    // A second, different terminal is a conflict, and so is a create said completed without its buy (any path);
    // a refused result or task type is alarmed by the receiver.
    if (e.kind === 'conflict' && (outcome === 'conflict' || outcome === 'completion_unresolved')) metrics.conflict(row.type);
    if (e.kind !== 'transition' || !e.to_status) continue;
    metrics.transition(row.type, e.from_status ?? '', e.to_status, e.source);
    const leftInput = e.from_status === 'input-required';
    const ended = isTerminal(e.to_status as OperationStatus);
    if (!leftInput && !ended) continue;
    // Durations need the moment a status began: read the history only at these rare points.
    const history = await store.operations.statusMarks(row.id);
    if (leftInput) {
      const asked = history.filter((h) => h.to_status === 'input-required' && h.id < e.id).pop();
      if (asked) metrics.approvalDuration.observe({ type: row.type }, (e.at - asked.at) / 1000);
    }
    if (ended) {
      const submitted = history.find((h) => h.to_status === 'submitted');
      if (submitted) metrics.asyncDuration.observe({ type: row.type }, (e.at - submitted.at) / 1000);
    }
  }
}
