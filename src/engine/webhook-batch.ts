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
 * RFC 9421 nonces are recorded first, all in one statement too (DbNonceReplayStore.
 * checkAndInsertManyOn). Left to their own job (the one-delivery path, in the same
 * transaction, right after): a delivery whose nonce was not recorded fresh here (a
 * replay, an expired entry, a key near its cap), one that asks a person something (its
 * tenant's expiry rules are read first), a second one for the same operation, one whose
 * operation is gone (stored as received). And if any delivery of the batch turns out
 * known already, the whole batch is undone and every one takes its own job, which
 * tells a duplicate, a retry still in flight and a payload mismatch apart.
 */
import { NEEDS_INPUT_STATUSES } from '../domain/status.js';
import type { DeliveryRow, NewDelivery, RecordResult } from '../store/deliveries-repo.js';
import type { PendingNonce } from './webhook-ingest.js';
import type { Store } from '../store/index.js';
import type { MutateResult, WebhookTarget } from '../store/operations-repo.js';
import type { Batcher, Tx } from '../store/tx.js';
import { firstPerOperation } from '../store/operations-batch.js';
import type { ObservationOutcome, TaskObservation } from './observation-plan.js';
import type { OperationService } from './operation-service.js';

export interface WebhookBatchItem {
  op: WebhookTarget;
  observation: TaskObservation;
  delivery: NewDelivery;
  /** The RFC 9421 nonce its signature carried: recorded first, in the batch (or its own job) before anything else of it. */
  nonce?: PendingNonce;
  now: number;
}

/** What storing and applying one delivery together gives (as `WebhookIngest.ingest`'s own transaction returns it). */
export interface StoredAndApplied {
  recorded: RecordResult;
  applied?: MutateResult<ObservationOutcome>;
}

/** Thrown inside the batch to undo it: a delivery of it was known already (or, with its nonce recorded, had no operation). */
class UndoBatch extends Error {
  constructor(why: string) {
    super(why);
  }
}

export class WebhookBatch implements Batcher<WebhookBatchItem, StoredAndApplied> {
  constructor(private readonly deps: { store: Store; operations: OperationService }) {}

  async run(trx: Tx, items: WebhookBatchItem[]): Promise<Array<{ value: StoredAndApplied } | undefined>> {
    const out: Array<{ value: StoredAndApplied } | undefined> = new Array(items.length).fill(undefined);
    let mine = items.flatMap((it, i) => (NEEDS_INPUT_STATUSES.has(it.observation.status) ? [] : [i]));
    // A second delivery for one operation goes its own way, after the batch (see OperationsRepo's batcher: a write hook may write the operation again).
    mine = firstPerOperation(mine.map((i) => items[i]!.op.id)).map((k) => mine[k]!);
    if (mine.length < 2) return out;
    // Nonces first, as one delivery records its own: one not recorded here (a replay, a key near its
    // cap) leaves its delivery to its own job, which refuses it or records it exactly.
    const signed = mine.filter((i) => items[i]!.nonce);
    if (signed.length > 0) {
      const fresh = await this.deps.store.nonces.checkAndInsertManyOn(
        trx,
        signed.map((i) => items[i]!.nonce!),
      );
      const left = new Set(signed.filter((_, k) => fresh[k] !== 'fresh'));
      mine = mine.filter((i) => !left.has(i));
    }
    if (mine.length === 0) return out;
    let stored: DeliveryRow[] = [];
    const results = await this.deps.operations.observeManyIn(
      trx,
      mine.map((i) => ({ operationId: items[i]!.op.id, obs: items[i]!.observation })),
      async (t, values) => {
        const decided: Array<{ delivery: NewDelivery; outcome: string }> = [];
        mine.forEach((i, k) => {
          // Undecided: the operation is gone. Left to its own job, which stores it as received,
          // unless its nonce was recorded here (its own job would take it for a replay): then undo all.
          if (values[k] === undefined) {
            if (items[i]!.nonce) throw new UndoBatch('a signed delivery of the batch has no operation');
            return;
          }
          decided.push({ delivery: items[i]!.delivery, outcome: values[k]! });
        });
        const rows = await this.deps.store.deliveries.recordAppliedManyIn(t, decided, items[mine[0]!]!.now);
        if (!rows) throw new UndoBatch('a delivery of the batch was stored before');
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
