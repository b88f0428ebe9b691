/**
 * Where the operation service hands a governed operation to the governance
 * flow (src/engine/governance/): the few points at which a governed spend
 * differs from any other operation. The service knows nothing else of it.
 */
import type { Lease, OperationRow } from '../../store/index.js';
import type { MutationPlan } from '../../store/operations-repo.js';
import type { ObservationOutcome } from '../observation-plan.js';

export interface GovernanceHooks {
  /** Whether this `check_kind` is one of the governed flow's own steps (check, review poll, outcome report). */
  handles(checkKind: string | null): boolean;
  /** Runs that step for a row this process holds the lease of. */
  run(row: OperationRow): Promise<void>;
  /**
   * Just before a governed operation is sent to the seller: its arguments, with the
   * approval's `governance_context`, or null when no usable approval is left (the
   * operation has then gone back to its check, and nothing is sent).
   */
  argumentsFor(row: OperationRow, lease: Lease): Promise<Record<string, unknown> | null>;
  /**
   * The write an observation of a governed operation makes, amended: the seller's
   * terminal result schedules the outcome report in the same commit.
   */
  amendObservation(row: OperationRow, plan: MutationPlan<ObservationOutcome>, now: number): MutationPlan<ObservationOutcome>;
}
