/**
 * The webhook deliveries of one grouped transaction (SQLite), stored and applied
 * together (src/store/tx.ts, Batcher): what `WebhookIngest.ingest` does for one in
 * its own savepoint, done for all of them with one statement per table: the
 * operations read at once, every observation planned, every delivery row inserted
 * already applied by one INSERT (which also dedupes them), then one UPDATE, one
 * INSERT of events and one of notifications (src/store/operations-batch.ts).
 *
 * Same commit, same guarantees: nothing is acknowledged before that commit, and a
 * delivery is still stored applied in the very statement group that applies it.
 * Left to their own job (the one-delivery path, in the same transaction, right after):
 * a delivery whose RFC 9421 nonce must be recorded first (see WebhookNonceBatch), one
 * that asks a person something (its tenant's expiry rules are read first), one whose
 * operation is gone (stored as received). And if any delivery of the batch turns out
 * known already, the whole batch is undone and every one takes its own job, which
 * tells a duplicate, a retry still in flight and a payload mismatch apart.
 */
import { NEEDS_INPUT_STATUSES } from '../domain/status.js';
import type { DeliveryRow, NewDelivery, RecordResult } from '../store/deliveries-repo.js';
import type { Store } from '../store/index.js';
import type { MutateResult, WebhookTarget } from '../store/operations-repo.js';
import type { Batcher, Tx } from '../store/tx.js';
import type { ObservationOutcome, TaskObservation } from './observation-plan.js';
import type { OperationService } from './operation-service.js';

export interface WebhookBatchItem {
  op: WebhookTarget;
  observation: TaskObservation;
  delivery: NewDelivery;
  /** Set when the delivery's nonce goes in first (RFC 9421): then it is left to its own job. */
  hasNonce: boolean;
  now: number;
}

/** What storing and applying one delivery together gives (as `WebhookIngest.ingest`'s own transaction returns it). */
export interface StoredAndApplied {
  recorded: RecordResult;
  applied?: MutateResult<ObservationOutcome>;
}

/** Thrown inside the batch to undo it: a delivery of it was known already. */
class KnownDelivery extends Error {
  constructor() {
    super('a delivery of the batch was stored before');
  }
}

export class WebhookBatch implements Batcher<WebhookBatchItem, StoredAndApplied> {
  constructor(private readonly deps: { store: Store; operations: OperationService }) {}

  async run(trx: Tx, items: WebhookBatchItem[]): Promise<Array<{ value: StoredAndApplied } | undefined>> {
    const out: Array<{ value: StoredAndApplied } | undefined> = new Array(items.length).fill(undefined);
    const mine = items.flatMap((it, i) => (it.hasNonce || NEEDS_INPUT_STATUSES.has(it.observation.status) ? [] : [i]));
    if (mine.length < 2) return out;
    let stored: DeliveryRow[] = [];
    const results = await this.deps.operations.observeManyIn(
      trx,
      mine.map((i) => ({ operationId: items[i]!.op.id, obs: items[i]!.observation })),
      async (t, values) => {
        // Undecided (the operation is gone): left to its own job, which stores it as received.
        const decided = mine.flatMap((i, k) => (values[k] === undefined ? [] : [{ delivery: items[i]!.delivery, outcome: values[k]! }]));
        const rows = await this.deps.store.deliveries.recordAppliedManyIn(t, decided, items[mine[0]!]!.now);
        if (!rows) throw new KnownDelivery();
        stored = rows;
      },
    );
    let next = 0;
    mine.forEach((i, k) => {
      const applied = results[k]!;
      if (applied.outcome === 'not_found') return;
      out[i] = { value: { recorded: { kind: 'new', delivery: stored[next++]! }, applied } };
    });
    return out;
  }
}
