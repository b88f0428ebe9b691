/**
 * One claimed live buy's due timers (src/domain/media-buy-timers.ts), run under
 * the lease it was claimed with; every write checks that lease, so a worker that
 * lost it (slow, declared dead) changes nothing.
 *
 * In order: a report overdue is noted as missing (`media_buy.report_missing`,
 * once per silence) before anything is asked; then the delivery is read from the
 * seller (`get_media_buy_delivery`, authoritative) when a report is missing, a
 * sequence number was skipped, the buy ended, or its fires go elsewhere; then its
 * status (`get_media_buys`, one call for the buys of a seller and account that ask
 * together: status-reads.ts), which a creatives' review (creative-tracker.ts) always
 * asks for, since the buy's `creative_approvals` come with it, and follows with
 * `list_creatives`. Each answer is applied as its own commit; the lease
 * is given up last. The calls go through the agent's circuit breaker; a failed
 * read is tried again with backoff, never dropped. A status read whose answer has
 * no row for the buy (or says MEDIA_BUY_NOT_FOUND of it alone) leaves the buy
 * unreadable: recorded and told once, asked again with backoff, ended when the
 * seller lists it again (src/domain/media-buy-unreadable.ts).
 *
 * Why timers on the buy and not operations: these reads are frequent,
 * background and idempotent (nothing to resend byte for byte, nothing a person
 * waits on), and a buy's timers must follow its own state (a report moves the
 * watchdog, a terminal status ends it) in the commit that changes that state.
 * Reads a person asks for (refresh) are operations, visible with their history.
 */
import type { Logger } from 'pino';
import { getMediaBuyDelivery, getMediaBuys } from '../../adcp/media-buy-reads.js';
import type { AdcpClient, TaskReply } from '../../adcp/types.js';
import { readDeliveryReply } from '../../domain/delivery-report.js';
import { silencePart, timersAfterDeliveryRead } from '../../domain/media-buy-plans.js';
import { NO_TIMERS, withNextCheck, type TrackingPolicy } from '../../domain/media-buy-timers.js';
import { unreadablePart, unreadableReason, unreadableRetryAt } from '../../domain/media-buy-unreadable.js';
import { retryDelayMs } from '../../domain/timing.js';
import type { MediaBuyRow, Store } from '../../store/index.js';
import type { BuyMutateResult, BuyPlan } from '../../store/media-buys-repo.js';
import type { Lease } from '../../store/operations-repo.js';
import type { SecretBox } from '../../store/secret-box.js';
import type { Tx } from '../../store/tx.js';
import { endpointFor } from '../agent-endpoints.js';
import { BrokenCircuitError, type AgentBreakers } from '../breakers.js';
import { buyChange, type ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import type { Metrics } from '../metrics.js';
import { planReport, type ApplyContext } from './report-apply.js';
import type { CreativeInbox } from './creative-inbox.js';
import type { CreativeTracker } from './creative-tracker.js';
import { buyInReply, planStatusRead } from './status-apply.js';
import { GroupedStatusReads, statusGroupKey } from './status-reads.js';

export interface TrackerDeps {
  store: Store;
  adcp: AdcpClient;
  secrets: SecretBox;
  bus: ChangeBus;
  breakers: AgentBreakers;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  tracking: TrackingPolicy;
  callTimeoutMs: number;
  /** ADCP_ORCH_REPORT_CLOCK_SKEW_MS. */
  clockSkewMs?: number;
  /** Creatives' reviews (absent: the creative timer is left alone). */
  creatives?: CreativeTracker;
  /** Where rejections learnt by a review go to a person. */
  inbox?: CreativeInbox;
}

type Read = { reply: TaskReply } | { failed: string; error?: { code: string; message?: string } };
/** A status read, and how many buys its call asked about: a MEDIA_BUY_NOT_FOUND is this buy's only when it was asked alone. */
type StatusRead = Read & { asked: number };

/** The error by which a seller says it does not know the buy. */
const NOT_FOUND = 'MEDIA_BUY_NOT_FOUND';

export class BuyTracker {
  private readonly ctx: ApplyContext;
  private readonly statusReads = new GroupedStatusReads<StatusRead>();

  constructor(private readonly deps: TrackerDeps) {
    this.ctx = { store: deps.store, tracking: deps.tracking, random: deps.clock.random };
  }

  async run(claimed: MediaBuyRow): Promise<void> {
    const asked = await this.runSteps(claimed);
    // Rejections learnt here go to the inbox on their own operations, in commits that lock those first.
    if (asked.inbox && this.deps.inbox) await this.deps.inbox.askOwed(claimed.id);
  }

  private async runSteps(claimed: MediaBuyRow): Promise<{ inbox: boolean }> {
    const lease: Lease = { owner: claimed.lease_owner ?? '', epoch: claimed.lease_epoch };
    const now = this.deps.clock.now();
    const done = { inbox: false };
    let buy = claimed;
    if (buy.report_due_at !== null && buy.report_due_at <= now && buy.final_received === 0 && buy.ended_at === null) {
      const noted = await this.commit(buy.id, lease, false, (b) => ({ ...silencePart(b, this.deps.tracking, now), value: null }));
      if (noted.outcome !== 'applied') return done;
      buy = noted.row;
    }
    const agent = await this.deps.store.agents.get(buy.agent_id);
    if (!agent) {
      // The seller's agent was removed: nothing can be asked any more.
      await this.commit(buy.id, lease, true, () => ({ patch: { ...withNextCheck(NO_TIMERS), ended_at: now }, value: null }));
      return done;
    }
    const query = { mediaBuyIds: [buy.media_buy_id], ...(buy.account !== null ? { account: JSON.parse(buy.account) as unknown } : {}) };
    const endpoint = endpointFor(agent, this.deps.secrets);
    const failures: string[] = [];

    // Creatives' reviews come in two reads: list_creatives, then the buy's creative_approvals in its status.
    const creativesDue = this.deps.creatives !== undefined && buy.creative_check_at !== null && buy.creative_check_at <= now;
    const statusDue = (buy.status_check_at !== null && buy.status_check_at <= now) || creativesDue;
    if (buy.delivery_poll_at !== null && buy.delivery_poll_at <= now) {
      const read = await this.read(agent.id, agent.name, 'get_media_buy_delivery', () => getMediaBuyDelivery(this.deps.adcp, endpoint, query, { timeoutMs: this.deps.callTimeoutMs }));
      if ('failed' in read) failures.push(read.failed);
      else {
        // The last step's write gives the lease up with it: one commit less.
        const after = await this.applyDelivery(buy, lease, read.reply, !statusDue);
        if (!after || !statusDue) return done;
        buy = after;
      }
    }
    if (statusDue) {
      // First: the buy's creative_approvals carry rejection reasons, which list_creatives does not.
      const asked = this.deps.clock.now();
      // One call for the buys of this seller and account asking in the same turn (a page claimed after their reports).
      const read = await this.statusReads.read(statusGroupKey(agent.id, buy.account), buy.media_buy_id, async (ids) => ({
        ...(await this.read(agent.id, agent.name, 'get_media_buys', () => getMediaBuys(this.deps.adcp, endpoint, { ...query, mediaBuyIds: ids }, { timeoutMs: this.deps.callTimeoutMs }))),
        asked: ids.length,
      }));
      const notFound = 'failed' in read && read.error?.code === NOT_FOUND && read.asked === 1 ? read.error : undefined;
      if ('failed' in read && !notFound) failures.push(read.failed);
      else {
        const last = failures.length === 0 && !creativesDue;
        const after = await this.applyStatus(buy, lease, 'reply' in read ? read.reply : { notFound: notFound! }, last, asked);
        if (after?.events.some((e) => e.kind === 'creative_rejected' || e.kind === 'creative_rejection_updated')) done.inbox = true;
        if (!after || last) return done;
        buy = after.row;
      }
    }
    if (creativesDue) {
      done.inbox = true;
      const reviewed = await this.deps.creatives!.review(buy, lease, agent, endpoint);
      if (!reviewed.row) return done;
      buy = reviewed.row;
      if (reviewed.failed) failures.push(reviewed.failed);
    }
    await this.release(buy, lease, failures);
    return done;
  }

  private async read(agentId: string, agentName: string, task: string, call: () => Promise<TaskReply>): Promise<Read> {
    try {
      const reply = await this.deps.breakers.execute(agentId, agentName, call);
      this.deps.metrics.agentCall(agentName, task, reply.error ? 'error' : 'ok');
      if (reply.error) {
        this.deps.metrics.agentError(agentName, reply.error.code);
        return {
          failed: `${task}: ${reply.error.code}${reply.error.message ? ` (${reply.error.message})` : ''}`,
          error: { code: reply.error.code, ...(reply.error.message ? { message: reply.error.message } : {}) },
        };
      }
      if (reply.status !== 'completed') return { failed: `${task}: answered ${reply.status}` };
      return { reply };
    } catch (err) {
      if (!(err instanceof BrokenCircuitError)) this.deps.metrics.agentCall(agentName, task, 'transport_error');
      return { failed: `${task}: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private async applyDelivery(buy: MediaBuyRow, lease: Lease, reply: TaskReply, release: boolean): Promise<MediaBuyRow | null> {
    const now = this.deps.clock.now();
    const read = readDeliveryReply(reply.data, now, this.deps.clockSkewMs);
    const row = read.ok ? read.reading.rows.find((r) => r.mediaBuyId === buy.media_buy_id) : undefined;
    const result = await this.commit(buy.id, lease, release, async (b, trx) => {
      if (read.ok && row) return planReport(this.ctx, trx, b, { reading: read.reading, row, source: 'poll', fireId: null }, now);
      // The seller answered without our buy (or with a report we cannot read): recorded, and the read is done.
      // A buy its seller no longer answers for is recorded as such once (unreadable_since), not at every read.
      const detail = read.ok ? { reason: 'the seller listed no delivery for this buy' } : { reason: read.message, code: read.code };
      const events = read.ok && b.unreadable_since !== null ? [] : [{ source: 'poll', kind: 'delivery_unreadable', at: now, detail }];
      return { patch: timersAfterDeliveryRead(b, this.deps.tracking, now, this.deps.clock.random), events, value: null };
    });
    if (result.outcome === 'lease_lost' || result.outcome === 'not_found') return null;
    if (read.ok && row) this.deps.metrics.deliveryReport('poll', result.outcome === 'applied' && result.value === 'applied' ? 'applied' : 'duplicate');
    return result.row;
  }

  /** A status read's answer: the seller's reply, or its word that it does not know the buy. */
  private async applyStatus(
    buy: MediaBuyRow,
    lease: Lease,
    answer: TaskReply | { notFound: { code: string; message?: string } },
    release: boolean,
    readStartedAt: number,
  ): Promise<{ row: MediaBuyRow; events: Array<{ kind: string }> } | null> {
    const now = this.deps.clock.now();
    const seller = 'notFound' in answer ? undefined : buyInReply(answer.data, buy.media_buy_id);
    const reason = unreadableReason('notFound' in answer ? answer.notFound : undefined);
    const result = await this.commit(buy.id, lease, release, async (b, trx) => {
      if (seller) return planStatusRead(this.ctx, trx, b, seller, 'poll', now, { readStartedAt });
      // Unreadable: told once (when it starts), then asked again with backoff until the seller lists it again.
      const part = unreadablePart(b, reason, 'poll', now);
      const since = b.unreadable_since ?? now;
      const next = {
        status_check_at: unreadableRetryAt(now, since, this.deps.tracking, this.deps.clock.random),
        report_due_at: b.report_due_at,
        delivery_poll_at: b.delivery_poll_at,
        creative_check_at: b.creative_check_at,
      };
      return { patch: { ...part.patch, ...withNextCheck(next) }, events: part.events.map((e) => ({ ...e, at: now })), value: null };
    });
    if (result.outcome === 'lease_lost' || result.outcome === 'not_found') return null;
    return { row: result.row, events: result.outcome === 'applied' ? result.events : [] };
  }

  /** Gives the lease up; reads that failed are due again after the backoff (the attempt count keeps growing until one works). */
  private async release(buy: MediaBuyRow, lease: Lease, failures: string[]): Promise<void> {
    const now = this.deps.clock.now();
    await this.commit(buy.id, lease, false, (b) => {
      if (failures.length === 0) return { patch: { lease_owner: null, lease_until: null, attempt: 0 }, value: null };
      // A seller down for long is asked at the status pace, not every minute.
      const wait = b.attempt > 5 ? this.deps.tracking.statusIntervalMs : retryDelayMs(b.attempt, undefined, this.deps.clock.random);
      const later = (at: number | null) => (at !== null && at <= now ? now + wait : at);
      this.deps.log.warn({ buy_id: b.id, failures, retry_in_ms: wait }, 'reading a live buy from its seller failed; will retry');
      const timers = withNextCheck({ status_check_at: later(b.status_check_at), report_due_at: b.report_due_at, delivery_poll_at: later(b.delivery_poll_at), creative_check_at: later(b.creative_check_at) });
      return { patch: { ...timers, lease_owner: null, lease_until: null }, events: [{ source: 'poll', kind: 'read_failed', at: now, detail: { failures, retry_in_ms: wait } }], value: null };
    });
  }

  /** A write under the lease; with `release`, the lease is given up in the same write (the claim's work is done). */
  private async commit<T>(id: string, lease: Lease, release: boolean, plan: (row: MediaBuyRow, trx: Tx) => Promise<BuyPlan<T>> | BuyPlan<T>): Promise<BuyMutateResult<T>> {
    const planned = release
      ? async (row: MediaBuyRow, trx: Tx): Promise<BuyPlan<T>> => {
          const p = await plan(row, trx);
          return { ...p, patch: { ...p.patch, lease_owner: null, lease_until: null, attempt: 0 } };
        }
      : plan;
    const result = await this.deps.store.mediaBuys.mutate(id, lease, planned, this.deps.clock.now());
    if (result.outcome === 'applied' && result.events.length > 0) this.deps.bus.publishBuy(buyChange(result));
    if (result.outcome === 'lease_lost') this.deps.log.info({ buy_id: id }, 'live buy: lease lost before writing; discarded');
    return result;
  }
}
