/**
 * Delivery outcomes are claimed by the same timer claim as operations and buys
 * (src/store/timer-claims.ts), on their own timer column and condition: only
 * `pending` rows, soonest `next_attempt_at` first, each claim leasing and counting
 * the attempt; a leased row is neither claimed again nor reported as the next due
 * time until its lease expires. On SQLite and (with TEST_DATABASE_URL) PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import type { OutcomeRow } from '../../src/store/media-buy-outcomes-repo.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';

describe.each(dialects)('delivery outcomes claimed on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  const t = 1_800_000_000_000;
  const leaseMs = 10_000;

  beforeAll(async () => {
    database = await make();
    ({ store, tenantId } = await openSellerStore(database));
  });
  afterAll(async () => closeSellerStore(store, database));

  function outcome(id: string, status: OutcomeRow['status'], nextAttemptAt: number | null): OutcomeRow {
    return {
      id, buy_id: 'buy-1', tenant_id: tenantId, report_id: `report-${id}`, governance_agent_id: 'gov-1', request: '{}', status,
      outcome_id: null, findings: null, error: null, next_attempt_at: nextAttemptAt, attempt: 0,
      lease_owner: null, lease_until: null, lease_epoch: 0, created_at: t - 10_000, reported_at: null,
    };
  }

  it('claims pending outcomes that are due, soonest first, once per lease', async () => {
    await store.db.kysely
      .insertInto('media_buy_outcomes')
      .values([outcome('later', 'pending', t - 1_000), outcome('sooner', 'pending', t - 2_000), outcome('future', 'pending', t + 60_000), outcome('done', 'accepted', t - 5_000)])
      .execute();
    const outcomes = store.deliveryOutcomes;
    expect(await outcomes.nextDueAt(t)).toBe(t - 2_000);

    const first = await outcomes.claimDue('instance-a', t, leaseMs, 10);
    expect(first.map((o) => [o.id, o.lease_owner, Number(o.attempt), Number(o.lease_epoch), Number(o.lease_until)]).sort()).toEqual([
      ['later', 'instance-a', 1, 1, t + leaseMs],
      ['sooner', 'instance-a', 1, 1, t + leaseMs],
    ]);
    // Leased: not claimed by another instance, not the next due time either.
    expect(await outcomes.claimDue('instance-b', t + 1, leaseMs, 10)).toEqual([]);
    expect(await outcomes.nextDueAt(t + 1)).toBe(t + 60_000);

    // The lease expired with the work unfinished: due again, the attempt counted again.
    const again = await outcomes.claimDue('instance-b', t + leaseMs, leaseMs, 1);
    expect(again.map((o) => [o.id, o.lease_owner, Number(o.attempt)])).toEqual([['sooner', 'instance-b', 2]]);
  });

  it('has no due time when nothing is pending', async () => {
    await store.db.kysely.updateTable('media_buy_outcomes').set({ status: 'accepted' }).execute();
    expect(await store.deliveryOutcomes.nextDueAt(t + 120_000)).toBeNull();
    expect(await store.deliveryOutcomes.claimDue('instance-a', t + 120_000, leaseMs, 10)).toEqual([]);
  });
});
