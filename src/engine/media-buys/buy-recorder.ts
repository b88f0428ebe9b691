/**
 * Where a live media buy begins, and where the buy hears of the operations made
 * on its behalf: an operation write hook (OperationsRepo.addWriteHook), so it
 * runs in the very commit of the operation's change, whichever path made it
 * (a call's reply, a webhook, a poll, reconciliation, an adopted task, a
 * person's answer).
 *
 * - A `create_media_buy` that completes with a `media_buy_id` makes the buy
 *   (`media_buy.created`), with what the request and the result say: flight,
 *   budget, packages, the reporting webhook we registered (its URL token and its
 *   sealed secret, copied as stored in the request), governance, campaign.
 * - A child operation of the buy's create (pause, resume, cancel:
 *   `update_media_buy`; a person's refresh: `get_media_buys`,
 *   `get_media_buy_delivery`) that ends is applied to the buy: a read's answer
 *   like a background read's, an update by what its reply says the buy now is
 *   (update-apply.ts), confirmed by a status read soon after.
 */
import type { Logger } from 'pino';
import { readDeliveryReply } from '../../domain/delivery-report.js';
import { mergePackages, requestBudget } from '../../domain/media-buy-delivery.js';
import { nextStatusCheck, withNextCheck, type TrackingPolicy } from '../../domain/media-buy-timers.js';
import { parseGovernance } from '../../domain/governed-flow.js';
import { statedStatus } from '../../domain/update-reply.js';
import { firstReportExpectedBy } from '../../domain/first-report.js';
import { isReportingFrequency, type ReportingMode } from '../../domain/reporting-webhook.js';
import { isTerminal, type OperationStatus } from '../../domain/status.js';
import type { EventRow, MediaBuyRow, NewNotification, NotificationRow, OperationRow, Store } from '../../store/index.js';
import { newMediaBuyRow } from '../../store/media-buy-row.js';
import { newBuyId, type BuyMutateResult } from '../../store/media-buys-repo.js';
import type { NewEvent } from '../../store/operations-repo.js';
import type { Tx } from '../../store/tx.js';
import { planReport, type ApplyContext } from './report-apply.js';
import { buyInReply, planStatusRead } from './status-apply.js';
import { planUpdateEnded } from './update-apply.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The tasks whose ending a buy cares about when they were made for it. */
const BUY_CHILD_TASKS = new Set(['update_media_buy', 'get_media_buys', 'get_media_buy_delivery']);

const endsOperation = (events: Pick<EventRow, 'kind' | 'to_status'>[]) =>
  events.some((e) => e.kind === 'transition' && e.to_status !== null && isTerminal(e.to_status as OperationStatus));

/**
 * Whether this change ends an operation made on behalf of a buy (a child of its create:
 * pause, resume, cancel, refresh), which the buy takes in the same commit: live readers
 * of the buy are told of it by the buy's id (src/notify/live-updates.ts).
 */
export function endsBuyChild(row: Pick<OperationRow, 'type' | 'parent_id'>, events: Pick<EventRow, 'kind' | 'to_status'>[]): boolean {
  return row.parent_id !== null && BUY_CHILD_TASKS.has(row.type) && endsOperation(events);
}

export class BuyRecorder {
  private readonly ctx: ApplyContext;

  constructor(
    private readonly deps: { store: Store; tracking: TrackingPolicy; random: () => number; log: Logger; clockSkewMs?: number },
  ) {
    this.ctx = { store: deps.store, tracking: deps.tracking, random: deps.random };
  }

  /** The hook: cheap checks first, since it sees every operation change. */
  readonly onOperationWrite = async (trx: Tx, row: OperationRow, events: EventRow[], now: number): Promise<NotificationRow[]> => {
    if (row.type === 'create_media_buy') return row.status === 'completed' && endsOperation(events) ? this.record(trx, row, now) : [];
    if (endsBuyChild(row, events)) return this.childEnded(trx, row, now);
    return [];
  };

  /**
   * The hook for the changes of one batched write at once: the buys they make, inserted
   * together (one statement per table: MediaBuysRepo.insertManyIn), their notifications
   * left for the batch to write with the changes' own; a change that ends a buy's child
   * operation is applied as for one.
   */
  readonly onOperationWrites = async (
    trx: Tx,
    changes: Array<{ row: OperationRow; events: EventRow[]; now: number }>,
  ): Promise<Array<{ written: NotificationRow[]; unwritten: NewNotification[] }>> => {
    const out = changes.map(() => ({ written: [] as NotificationRow[], unwritten: [] as NewNotification[] }));
    const making: Array<{ index: number; op: OperationRow; mediaBuyId: string; built: ReturnType<typeof buyFromOperation> }> = [];
    for (const [index, { row, events, now }] of changes.entries()) {
      if (row.type === 'create_media_buy') {
        if (row.status !== 'completed' || !endsOperation(events)) continue;
        const result = row.result ? (JSON.parse(row.result) as Json) : {};
        const mediaBuyId = typeof result.media_buy_id === 'string' && result.media_buy_id.length > 0 ? result.media_buy_id : undefined;
        if (mediaBuyId) making.push({ index, op: row, mediaBuyId, built: buyFromOperation(row, result, mediaBuyId, this.deps.tracking, now, this.deps.random) });
      } else if (endsBuyChild(row, events)) {
        out[index]!.written = await this.childEnded(trx, row, now);
      }
    }
    if (making.length === 0) return out;
    const made = await this.deps.store.mediaBuys.insertManyIn(
      trx,
      making.map((m) => m.built),
    );
    making.forEach((m, k) => {
      const buy = made[k];
      if (!buy) this.deps.log.info({ operation_id: m.op.id, media_buy_id: m.mediaBuyId }, 'media buy already recorded (by this operation or another that found it)');
      else out[m.index]!.unwritten = buy.unwritten;
    });
    return out;
  };

  private async record(trx: Tx, op: OperationRow, now: number): Promise<NotificationRow[]> {
    const result = op.result ? (JSON.parse(op.result) as Json) : {};
    const mediaBuyId = typeof result.media_buy_id === 'string' && result.media_buy_id.length > 0 ? result.media_buy_id : undefined;
    if (!mediaBuyId) return [];
    const built = buyFromOperation(op, result, mediaBuyId, this.deps.tracking, now, this.deps.random);
    const written = await this.deps.store.mediaBuys.insertIn(trx, built.row, built.events);
    if (!written) this.deps.log.info({ operation_id: op.id, media_buy_id: mediaBuyId }, 'media buy already recorded (by this operation or another that found it)');
    return written?.notifications ?? [];
  }

  private async childEnded(trx: Tx, op: OperationRow, now: number): Promise<NotificationRow[]> {
    const buy = await this.deps.store.mediaBuys.byOperation(op.parent_id!, trx);
    if (!buy) return [];
    const result = op.result ? (JSON.parse(op.result) as Json) : {};
    let applied: BuyMutateResult<unknown>;
    if (op.type === 'get_media_buys' && op.status === 'completed') {
      const seller = buyInReply(result, buy.media_buy_id);
      if (!seller) return [];
      // Read when the refresh was asked, at the latest; a rejection it brings is taken to the inbox by a review soon
      // (this commit holds the refresh's operation, not the sync's).
      const opts = { readStartedAt: op.created_at, askSoon: true };
      applied = await this.deps.store.mediaBuys.mutateIn(trx, buy.id, null, (b, t) => planStatusRead(this.ctx, t, b, seller, 'poll', now, opts), now);
    } else if (op.type === 'get_media_buy_delivery' && op.status === 'completed') {
      const read = readDeliveryReply(result, now, this.deps.clockSkewMs);
      const row = read.ok ? read.reading.rows.find((r) => r.mediaBuyId === buy.media_buy_id) : undefined;
      if (!read.ok || !row) return [];
      applied = await this.deps.store.mediaBuys.mutateIn(trx, buy.id, null, (b, t) => planReport(this.ctx, t, b, { reading: read.reading, row, source: 'poll', fireId: null }, now), now);
    } else if (op.type === 'update_media_buy') {
      // What the seller's reply says the buy now is, in this commit (update-apply.ts); a status read follows soon.
      applied = await this.deps.store.mediaBuys.mutateIn(trx, buy.id, null, (b, t) => planUpdateEnded(this.ctx, t, b, op, now), now);
    } else {
      return [];
    }
    return applied.outcome === 'applied' ? applied.notifications : [];
  }
}

/** The new buy's row and first events, from its completed create_media_buy. */
export function buyFromOperation(op: OperationRow, result: Json, mediaBuyId: string, tracking: TrackingPolicy, now: number, random: () => number): { row: MediaBuyRow; events: NewEvent[] } {
  const request = JSON.parse(op.request_body) as Json;
  const reporting = isObject(request.reporting_webhook) ? request.reporting_webhook : undefined;
  const ours = op.reporting_token != null && reporting !== undefined;
  const frequency = reporting && isReportingFrequency(reporting.reporting_frequency) ? reporting.reporting_frequency : null;
  const auth = isObject(reporting?.authentication) ? reporting.authentication : undefined;
  const scheme = Array.isArray(auth?.schemes) ? auth.schemes[0] : undefined;
  // The secret as the request stores it: sealed in place (src/engine/sealed-request.ts); copied, never opened here.
  const sealed = isObject(auth?.credentials) && typeof auth.credentials.$sealed === 'string' ? auth.credentials.$sealed : null;
  const state = parseGovernance(op.governance);
  // Without fires of ours: the caller's own webhook, the tenant polling governed buys, or no public URL.
  const reportingAuth: ReportingMode = ours
    ? scheme === 'HMAC-SHA256' ? 'hmac' : scheme === 'Bearer' ? 'bearer' : 'rfc9421'
    : reporting !== undefined ? 'none' : state?.reporting_polled ? 'polled:governed' : 'polled:no_public_url';
  const token = typeof state?.outcome?.request.governance_context === 'string' ? state.outcome.request.governance_context : (state?.approval?.token ?? null);
  const budget = requestBudget(request);
  const flightStart = request.start_time === 'asap' ? now : time(request.start_time);
  const flightEnd = time(request.end_time);
  // The buy's own status: `media_buy_status` (3.1+) first; a task's `completed` never makes a buy completed.
  const stated = statedStatus(result);
  const status = stated ?? 'pending_start';
  const expected = ours && frequency ? firstReportExpectedBy(now, { start: flightStart ?? null, end: flightEnd ?? null }, frequency) : null;
  const timers = withNextCheck({
    // A reply that states the buy's status is enough to start from: the next read comes on the interval.
    // One that does not (an adopted task's, a seller's terse reply) is followed by a read at once.
    status_check_at: stated ? nextStatusCheck(now, tracking, random) : now,
    report_due_at: expected === null ? null : expected + tracking.graceMs,
    // Fires that go elsewhere: we poll for the delivery instead.
    delivery_poll_at: ours ? null : now + tracking.statusIntervalMs,
    // Its creatives' reviews are looked at once some are sent (src/engine/media-buys/creative-recorder.ts).
    creative_check_at: null,
  });
  // Nothing delivered, reported or leased yet: those columns keep newMediaBuyRow's defaults.
  const row: MediaBuyRow = newMediaBuyRow(
    { id: newBuyId(), tenant_id: op.tenant_id, agent_id: op.agent_id, operation_id: op.id, media_buy_id: mediaBuyId, created_at: now },
    {
      campaign_id: op.parent_id?.startsWith('cmp_') ? op.parent_id : null,
      account: request.account !== undefined ? JSON.stringify(request.account) : null,
      governance: state ? JSON.stringify({ agent_id: state.agent_id, plan_id: state.plan_id }) : null,
      governance_context_enc: state ? token : null,
      status,
      revision: typeof result.revision === 'number' ? result.revision : null,
      valid_actions: Array.isArray(result.valid_actions) ? JSON.stringify(result.valid_actions) : null,
      flight_start: flightStart ?? null,
      flight_end: flightEnd ?? null,
      budget_amount: budget.amount,
      currency: budget.currency ?? (typeof result.currency === 'string' ? result.currency : null),
      packages: JSON.stringify(mergePackages([], result.packages)),
      report_frequency: frequency,
      next_expected_at: expected,
      reporting_token: ours ? op.reporting_token! : null,
      reporting_secret_enc: ours ? sealed : null,
      reporting_auth: reportingAuth,
      ...timers,
    },
  );
  const events: NewEvent[] = [
    { source: 'call', kind: 'created', to: status, at: now, detail: { operation_id: op.id, media_buy_id: mediaBuyId, reporting: { frequency, webhook: reportingAuth } } },
    { source: 'call', kind: 'status_changed', from: null, to: status, at: now },
  ];
  return { row, events };
}

function time(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : undefined;
}
