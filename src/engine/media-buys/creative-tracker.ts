/**
 * Following a buy's creatives through the seller's review (README, Creatives), as
 * a step of the buy's own timer (`creative_check_at`, claimed with the buy's lease
 * by buy-worker.ts, run by buy-tracker.ts):
 *
 * 1. the buy's status read (the tracker's step before this one) brings the buy's
 *    `creative_approvals` with their rejection reasons (`applyApprovals`, called
 *    from status-apply.ts), and moves the buy out of `pending_creatives` when the
 *    seller says so;
 * 2. `list_creatives` for the creatives still under review, changed since the
 *    earliest of them was sent (`updated_after`), page by page: the library's word,
 *    for creatives assigned to no package too;
 * 3. one commit under the lease: what it says (src/domain/creative-review.ts), and
 *    every review past its deadline marked stalled (`creative.stalled`), whether or
 *    not the seller answered: the deadline is ours;
 * 4. rejections learnt are taken to the inbox (creative-inbox.ts).
 *
 * An answer read before a creative was sent again (a correction) is not applied to
 * it: `readStartedAt` against the creative's `sent_at`.
 */
import type { Logger } from 'pino';
import { listCreatives } from '../../adcp/creative-reads.js';
import type { AdcpClient, AgentEndpoint, TaskReply } from '../../adcp/types.js';
import { approvalsOfBuy, nextCreativeCheck, observe, readListCreatives, stallIfDue, type CreativeObservation, type CreativePolicy, type TrackedCreative } from '../../domain/creative-review.js';
import { isUnderReview } from '../../domain/creatives.js';
import type { NewEventSpec } from '../../domain/media-buy-plans.js';
import { withNextCheck } from '../../domain/media-buy-timers.js';
import type { MediaBuyRow, Store } from '../../store/index.js';
import { trackedOf, type CreativeRow } from '../../store/creatives-repo.js';
import type { Lease } from '../../store/operations-repo.js';
import type { Tx } from '../../store/tx.js';
import { BrokenCircuitError, type AgentBreakers } from '../breakers.js';
import { buyChange, type ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import type { Metrics } from '../metrics.js';

type Json = Record<string, unknown>;

/** Pages of list_creatives read per review (100 creatives each): a buy has far fewer under review. */
const MAX_PAGES = 10;
/** Clocks differ: a seller's `updated_date` a little before our send still counts. */
const CLOCK_SLACK_MS = 5 * 60_000;

export interface CreativeTrackerDeps {
  store: Store;
  adcp: AdcpClient;
  bus: ChangeBus;
  breakers: AgentBreakers;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  policy: CreativePolicy;
  callTimeoutMs: number;
}

/** What one creative's change writes, applied to its row and to the rules' view of it. */
async function writeChange(store: Store, t: Tx, buyId: string, c: TrackedCreative, patch: Json, now: number): Promise<TrackedCreative> {
  await store.creatives.updateIn(t, buyId, c.creative_id, patch, now);
  const next = { ...c, ...patch } as TrackedCreative & { approvals: unknown };
  if (typeof patch.approvals === 'string') next.approvals = JSON.parse(patch.approvals);
  return next as TrackedCreative;
}

export class CreativeTracker {
  constructor(private readonly deps: CreativeTrackerDeps) {}

  /**
   * Step 1 and 2 for a claimed buy whose creative timer is due. Returns the buy as
   * written (null if the lease was lost) and why the seller could not be read, if so.
   */
  async review(buy: MediaBuyRow, lease: Lease, agent: { id: string; name: string }, endpoint: AgentEndpoint): Promise<{ row: MediaBuyRow | null; failed?: string }> {
    const { store, clock } = this.deps;
    const under = (await store.creatives.forBuy(buy.id)).filter((c) => isUnderReview(c.status) && c.sync_state !== 'failed');
    const readStartedAt = clock.now();
    const read = under.length > 0 ? await this.list(agent, endpoint, buy, under) : { items: [] };
    const seen = new Map(('items' in read ? read.items : []).map((o) => [o.creative_id, o]));
    const now = clock.now();
    const result = await store.mediaBuys.mutate(
      buy.id,
      lease,
      async (b, t) => {
        const events: NewEventSpec[] = [];
        const all: TrackedCreative[] = [];
        for (const row of await store.creatives.forBuy(b.id, t)) {
          let c = trackedOf(row);
          const obs = seen.get(c.creative_id);
          const observed = obs ? observe(c, obs, readStartedAt, 'poll', now) : null;
          if (observed) {
            c = await writeChange(store, t, b.id, c, observed.patch, now);
            events.push(...observed.events);
          }
          const stalled = stallIfDue(c, now);
          if (stalled) {
            c = await writeChange(store, t, b.id, c, stalled.patch, now);
            events.push(...stalled.events);
          }
          all.push(c);
        }
        const next = b.ended_at === null ? nextCreativeCheck(all, this.deps.policy, now, clock.random) : null;
        const patch = withNextCheck({ status_check_at: b.status_check_at, report_due_at: b.report_due_at, delivery_poll_at: b.delivery_poll_at, creative_check_at: next });
        return { patch, events: events.map((e) => ({ ...e, at: now })), value: null };
      },
      now,
    );
    if (result.outcome === 'applied' && result.events.length > 0) this.deps.bus.publishBuy(buyChange(result));
    if (result.outcome === 'lease_lost' || result.outcome === 'not_found') return { row: null };
    return { row: result.row, ...('failed' in read ? { failed: read.failed } : {}) };
  }

  /** `list_creatives` for these creatives, through the agent's breaker, every page. */
  private async list(agent: { id: string; name: string }, endpoint: AgentEndpoint, buy: MediaBuyRow, under: CreativeRow[]): Promise<{ items: CreativeObservation[] } | { failed: string }> {
    const since = Math.min(...under.map((c) => c.sent_at)) - CLOCK_SLACK_MS;
    const query = {
      ...(buy.account !== null ? { account: JSON.parse(buy.account) as unknown } : {}),
      // One page's worth; any beyond are still seen through the buy's creative_approvals.
      creativeIds: under.map((c) => c.creative_id).slice(0, 100),
      updatedAfter: new Date(since).toISOString(),
    };
    const items: CreativeObservation[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      let reply: TaskReply;
      try {
        reply = await this.deps.breakers.execute(agent.id, agent.name, () =>
          listCreatives(this.deps.adcp, endpoint, { ...query, ...(cursor ? { cursor } : {}) }, { timeoutMs: this.deps.callTimeoutMs }),
        );
      } catch (err) {
        if (!(err instanceof BrokenCircuitError)) this.deps.metrics.agentCall(agent.name, 'list_creatives', 'transport_error');
        return { failed: `list_creatives: ${err instanceof Error ? err.message : String(err)}` };
      }
      this.deps.metrics.agentCall(agent.name, 'list_creatives', reply.error ? 'error' : 'ok');
      if (reply.error) {
        this.deps.metrics.agentError(agent.name, reply.error.code);
        return { failed: `list_creatives: ${reply.error.code}${reply.error.message ? ` (${reply.error.message})` : ''}` };
      }
      if (reply.status !== 'completed') return { failed: `list_creatives: answered ${reply.status}` };
      const read = readListCreatives(reply.data);
      if (!read.ok) return { failed: `list_creatives: ${read.message}` };
      items.push(...read.items);
      if (!read.cursor) break;
      cursor = read.cursor;
    }
    return { items };
  }
}

/**
 * The buy's `creative_approvals` in a `get_media_buys` row, applied to its creatives
 * inside the status read's commit (status-apply.ts). Returns the buy events they
 * make and the buy's creative timer after them (undefined: unchanged). With
 * `askSoon`, a new rejection makes the timer due now, so that a review takes it to
 * the inbox at once (the commit here holds the buy's lock, not its operation's).
 */
export async function applyApprovals(
  store: Store,
  trx: Tx,
  buy: MediaBuyRow,
  seller: Json,
  opts: { policy: CreativePolicy; readStartedAt: number; source: string; now: number; random: () => number; askSoon: boolean },
): Promise<{ events: NewEventSpec[]; creative_check_at?: number | null }> {
  const rows = await store.creatives.forBuy(buy.id, trx);
  if (rows.length === 0) return { events: [] };
  const byCreative = approvalsOfBuy(seller);
  const events: NewEventSpec[] = [];
  const all: TrackedCreative[] = [];
  let owed = false;
  for (const row of rows) {
    let c = trackedOf(row);
    const approvals = byCreative.get(c.creative_id);
    const change = approvals ? observe(c, { creative_id: c.creative_id, approvals }, opts.readStartedAt, opts.source, opts.now) : null;
    if (change) {
      c = await writeChange(store, trx, buy.id, c, change.patch, opts.now);
      events.push(...change.events);
      if (change.patch.inbox_state === 'owed') owed = true;
    }
    all.push(c);
  }
  if (events.length === 0) return { events };
  const next = buy.ended_at === null ? nextCreativeCheck(all, opts.policy, opts.now, opts.random) : null;
  return { events, creative_check_at: owed && opts.askSoon ? opts.now : next };
}
