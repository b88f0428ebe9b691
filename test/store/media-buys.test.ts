/**
 * Live media buys in the store, on SQLite and (with TEST_DATABASE_URL) PostgreSQL:
 * the buy made in the commit that completes its create (whatever wrote it), its
 * timers claimed with leases that never overlap, lease-checked writes, durable
 * dedupe of fires and reports, and two instances applying one fire once.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFire } from '../../src/domain/delivery-report.js';
import { ChangeBus } from '../../src/engine/change-bus.js';
import { BuyRecorder } from '../../src/engine/media-buys/buy-recorder.js';
import { ReportIngest } from '../../src/engine/media-buys/report-ingest.js';
import { Metrics } from '../../src/engine/metrics.js';
import type { Store } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { webhookFingerprint } from '../../src/webhooks/fingerprint.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';
import { openStore } from '../../src/store/index.js';

const log = pino({ level: 'silent' });
const tracking = { graceMs: 60_000, statusIntervalMs: 600_000 };
let seq = 0;

describe.each(dialects)('live media buys on $name', ({ make }) => {
  let database: TestDatabase;
  let a: Store;
  let b: Store;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = await make();
    ({ store: a, tenantId, agentId } = await openSellerStore(database));
    // A second store on the same database stands for a second instance.
    b = await openStore(database.url);
    for (const s of [a, b]) s.operations.addWriteHook(new BuyRecorder({ store: s, tracking, random: () => 0, log }).onOperationWrite);
  });
  afterAll(async () => {
    await b?.close();
    await closeSellerStore(a, database);
  });

  /** A create_media_buy operation completed (as any path completes it: a mutate with a transition event); its buy's id. */
  async function completedBuy(store: Store = a): Promise<{ buyId: string; mediaBuyId: string; operationId: string }> {
    const n = ++seq;
    const now = Date.now();
    const op = newOperationRow({ id: `op-${n}-${database.name}`, tenant_id: tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: `key-${n}-0123456789abcdef`, request_body: JSON.stringify({ account: { account_id: 'acc' }, start_time: 'asap', end_time: new Date(now + 4 * 3_600_000).toISOString(), packages: [{ product_id: 'p', budget: 400 }] }), created_at: now }, { status: 'calling_adcp' });
    await store.operations.insert(op, { source: 'user', kind: 'created', to: 'requested' });
    const mediaBuyId = `mb_${n}`;
    const done = await store.operations.mutate(op.id, null, (row) => ({
      patch: { status: 'completed', result: JSON.stringify({ media_buy_id: mediaBuyId, status: 'active', packages: [{ package_id: 'pk', product_id: 'p', budget: 400 }] }), completed_at: now },
      events: [{ source: 'call', kind: 'transition', from: row.status, to: 'completed' }],
      value: null,
    }));
    // The buy and its notification are written in the completing commit, beside the operation's own.
    expect(done.outcome === 'applied' && done.notifications.map((n) => n.type)).toEqual(['operation.completed', 'media_buy.created', 'media_buy.activated']);
    const buy = (await store.mediaBuys.byOperation(op.id))!;
    return { buyId: buy.id, mediaBuyId, operationId: op.id };
  }

  it('makes the buy once, in the commit that completes its create', async () => {
    const { buyId, operationId } = await completedBuy();
    const buy = (await a.mediaBuys.get(buyId))!;
    expect(buy).toMatchObject({ tenant_id: tenantId, agent_id: agentId, status: 'active', budget_amount: 400, reporting_auth: 'polled:no_public_url', account: JSON.stringify({ account_id: 'acc' }) });
    expect(buy.next_check_at).not.toBeNull();
    // A later observation of the ended operation (a duplicate terminal, an event) makes no second buy.
    await a.operations.mutate(operationId, null, (row) => ({ events: [{ source: 'webhook', kind: 'transition', from: row.status, to: 'completed' }], value: null }));
    const all = await a.db.kysely.selectFrom('media_buys').select('id').where('operation_id', '=', operationId).execute();
    expect(all).toHaveLength(1);
  });

  it('claims due buys with leases that never overlap, and refuses a write under a lost lease', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await completedBuy()).buyId);
    // Past their first status read (the create stated a status: the read comes on the interval, jittered up to a tenth).
    const now = Date.now() + tracking.statusIntervalMs * 1.2;
    const [fromA, fromB] = await Promise.all([a.mediaBuys.claimDue('A', now, 30_000, 50), b.mediaBuys.claimDue('B', now, 30_000, 50)]);
    const claimedA = fromA.map((r) => r.id).filter((id) => ids.includes(id));
    const claimedB = fromB.map((r) => r.id).filter((id) => ids.includes(id));
    expect(claimedA.filter((id) => claimedB.includes(id))).toEqual([]);
    expect([...claimedA, ...claimedB].sort()).toEqual([...ids].sort());
    // Leased: not claimable again until the lease runs out; then the epoch moves on and the old holder's write is refused.
    expect((await a.mediaBuys.claimDue('C', now + 1, 30_000, 50)).filter((r) => ids.includes(r.id))).toEqual([]);
    const held = [...fromA, ...fromB].find((r) => r.id === ids[0])!;
    const later = (await b.mediaBuys.claimDue('D', now + 31_000, 30_000, 50)).find((r) => r.id === ids[0])!;
    expect(later.lease_epoch).toBe(held.lease_epoch + 1);
    const stale = await a.mediaBuys.mutate(ids[0]!, { owner: held.lease_owner!, epoch: held.lease_epoch }, () => ({ patch: { pacing_state: 'over' }, value: null }));
    expect(stale.outcome).toBe('lease_lost');
    expect((await a.mediaBuys.get(ids[0]!))!.pacing_state).toBe('not_started');
  });

  it('two instances taking the same fire at once apply it once', async () => {
    const { buyId, mediaBuyId } = await completedBuy();
    const ingests = [a, b].map(
      (store) => new ReportIngest({ store, bus: new ChangeBus(), metrics: new Metrics(undefined, { defaultMetrics: false }), log, tracking, now: () => Date.now(), random: () => 0 }),
    );
    const target = (await a.mediaBuys.get(buyId))!;
    const end = Date.now();
    const body = {
      notification_type: 'scheduled',
      sequence_number: 1,
      reporting_period: { start: new Date(end - 60_000).toISOString(), end: new Date(end).toISOString() },
      currency: 'USD',
      media_buy_deliveries: [{ media_buy_id: mediaBuyId, totals: { impressions: 100, spend: 1.5 }, by_package: [{ package_id: 'pk', spend: 1.5, impressions: 100 }] }],
    };
    const read = readFire(body, Date.now());
    if (!read.ok) throw new Error(read.message);
    const fire = { target, reading: read.reading, fingerprint: webhookFingerprint(body), text: JSON.stringify(body) };
    const outcomes = await Promise.all([...ingests, ...ingests].map((i) => i.ingest(fire)));
    expect(outcomes.filter((o) => o.kind === 'applied')).toHaveLength(1);
    expect(outcomes.every((o) => ['applied', 'duplicate', 'in_flight'].includes(o.kind))).toBe(true);
    const buy = (await a.mediaBuys.get(buyId))!;
    expect([buy.reports_received, buy.spend, buy.last_sequence]).toEqual([1, 1.5, 1]);
    expect(await a.reports.forBuy(buyId)).toHaveLength(1);
    // The same report inside another fire (another key) is the same report: stored once.
    const other = { ...body, idempotency_key: 'another-key-0123456789' };
    const readOther = readFire(other, Date.now());
    if (!readOther.ok) throw new Error(readOther.message);
    const again = await ingests[1]!.ingest({ target, reading: readOther.reading, fingerprint: webhookFingerprint(other), text: JSON.stringify(other) });
    expect(again).toMatchObject({ kind: 'applied', applied: 0, duplicates: 1 });
    expect((await a.mediaBuys.get(buyId))!.reports_received).toBe(1);
  });

  it("sums what each campaign's buys delivered, in one read", async () => {
    const one = await completedBuy();
    const two = await completedBuy();
    const other = await completedBuy();
    const camp = `cmp_${database.name}_${seq}`;
    await a.db.kysely.updateTable('media_buys').set({ campaign_id: camp, spend: 10.25, impressions: 1000 }).where('id', 'in', [one.buyId, two.buyId]).execute();
    await a.db.kysely.updateTable('media_buys').set({ campaign_id: `${camp}_other`, spend: 3, impressions: 5 }).where('id', '=', other.buyId).execute();
    const sums = await a.mediaBuys.deliveredByCampaigns([camp, 'cmp_none']);
    expect([...sums.entries()]).toEqual([[camp, { spend: 20.5, impressions: 2000, buys: 2 }]]);
  });
});
