/**
 * Following a buy's creatives through the seller's review (README, Creatives), as
 * a step of the buy's own timer (`creative_check_at`, claimed with the buy's lease
 * by buy-worker.ts, run by buy-tracker.ts):
 *
 * 1. the buy's status read (the tracker's step before this one) brings the buy's
 *    `creative_approvals` with their rejection reasons (creative-approvals.ts,
 *    called from status-apply.ts), and moves the buy out of `pending_creatives` when the
 *    seller says so;
 * 2. `list_creatives` for the creatives still under review, changed since the
 *    earliest of them was sent (`updated_after`), page by page: the library's word,
 *    for creatives assigned to no package too. It gives no rejection reason (AdCP
 *    3.0): a rejection it reports for a creative assigned to packages is completed
 *    with the buy's `creative_approvals`, read again then, so that people are told
 *    why with the rejection itself;
 * 3. one commit under the lease: what it says (src/domain/creative-review.ts), and
 *    every review past its deadline marked stalled (`creative.stalled`), whether or
 *    not the seller answered: the deadline is ours;
 * 4. rejections learnt are taken to the inbox (creative-inbox.ts).
 *
 * An answer asked for before a creative's send was seen to end (a correction
 * still on its way, say) is not applied to it: `readStartedAt` against the
 * creative's `synced_at`.
 */
import type { Logger } from 'pino';
import { listCreatives } from '../../adcp/creative-reads.js';
import { getMediaBuys } from '../../adcp/media-buy-reads.js';
import type { AdcpClient, AgentEndpoint, TaskReply } from '../../adcp/types.js';
import { approvalsOfBuy, nextCreativeCheck, observe, readListCreatives, stallIfDue, type CreativeObservation, type CreativePolicy, type TrackedCreative } from '../../domain/creative-review.js';
import { isUnderReview } from '../../domain/creatives.js';
import type { NewEventSpec } from '../../domain/media-buy-plans.js';
import { withNextCheck } from '../../domain/media-buy-timers.js';
import type { MediaBuyRow, Store } from '../../store/index.js';
import { trackedOf, type CreativeRow } from '../../store/creatives-repo.js';
import type { Lease } from '../../store/operations-repo.js';
import { BrokenCircuitError, type AgentBreakers } from '../breakers.js';
import { buyChange, type ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import type { Metrics } from '../metrics.js';
import { writeChange } from './creative-approvals.js';
import { buyInReply } from './status-apply.js';

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
    await this.withReasons(agent, endpoint, buy, under, seen);
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

  /** Rejections the library reports for creatives on the buy's packages get the buy's creative_approvals (with the reasons). */
  private async withReasons(agent: { id: string; name: string }, endpoint: AgentEndpoint, buy: MediaBuyRow, under: CreativeRow[], seen: Map<string, CreativeObservation>): Promise<void> {
    const assigned = new Set(under.filter((c) => (JSON.parse(c.package_ids) as string[]).length > 0).map((c) => c.creative_id));
    const wanting = [...seen.values()].filter((o) => o.status === 'rejected' && assigned.has(o.creative_id));
    if (wanting.length === 0) return;
    const query = { mediaBuyIds: [buy.media_buy_id], ...(buy.account !== null ? { account: JSON.parse(buy.account) as unknown } : {}) };
    const reply = await this.ask(agent, 'get_media_buys', () => getMediaBuys(this.deps.adcp, endpoint, query, { timeoutMs: this.deps.callTimeoutMs }));
    const row = 'reply' in reply ? buyInReply(reply.reply.data, buy.media_buy_id) : undefined;
    if (!row) return; // the rejection stands without its reason; the next status read brings it
    const approvals = approvalsOfBuy(row);
    for (const o of wanting) {
      const a = approvals.get(o.creative_id);
      if (a) seen.set(o.creative_id, { ...o, approvals: a });
    }
  }

  /** One read through the agent's breaker, counted like every call. */
  private async ask(agent: { id: string; name: string }, task: string, call: () => Promise<TaskReply>): Promise<{ reply: TaskReply } | { failed: string }> {
    let reply: TaskReply;
    try {
      reply = await this.deps.breakers.execute(agent.id, agent.name, call);
    } catch (err) {
      if (!(err instanceof BrokenCircuitError)) this.deps.metrics.agentCall(agent.name, task, 'transport_error');
      return { failed: `${task}: ${err instanceof Error ? err.message : String(err)}` };
    }
    this.deps.metrics.agentCall(agent.name, task, reply.error ? 'error' : 'ok');
    if (reply.error) {
      this.deps.metrics.agentError(agent.name, reply.error.code);
      return { failed: `${task}: ${reply.error.code}${reply.error.message ? ` (${reply.error.message})` : ''}` };
    }
    return reply.status === 'completed' ? { reply } : { failed: `${task}: answered ${reply.status}` };
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
      const asked = await this.ask(agent, 'list_creatives', () =>
        listCreatives(this.deps.adcp, endpoint, { ...query, ...(cursor ? { cursor } : {}) }, { timeoutMs: this.deps.callTimeoutMs }),
      );
      if ('failed' in asked) return asked;
      const read = readListCreatives(asked.reply.data);
      if (!read.ok) return { failed: `list_creatives: ${read.message}` };
      items.push(...read.items);
      if (!read.cursor) break;
      cursor = read.cursor;
    }
    return { items };
  }
}
