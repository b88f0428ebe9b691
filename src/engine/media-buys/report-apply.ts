/**
 * Applying one buy's row of a delivery report (a fire's, or a poll's) in the
 * transaction that stores it: the report is inserted (deduped per buy), takes its
 * place in the ledger (superseding, or superseded), the buy's figures, pacing,
 * sequence, status and timers are recomputed from the ledger, and a governed
 * buy's delivery outcome is put in the outbox (src/engine/media-buys/delivery-outcomes.ts).
 * Everything commits together with the buy's events and notifications, through
 * MediaBuysRepo.mutateIn.
 */
import { randomUUID } from 'node:crypto';
import type { BuyDelivery, DeliveryReading } from '../../domain/delivery-report.js';
import { buyPacing, deliveryFigures, packagesWithDelivery, withReportedPackages, type PackageState } from '../../domain/media-buy-delivery.js';
import { sequencePart, statusPart, timersAfterDeliveryRead, timersAfterReport, type NewEventSpec } from '../../domain/media-buy-plans.js';
import { DEFAULT_PACING, figuresArePartial, judgeableReading, nextPacing, type Pacing, type PacingState, type PacingThresholds } from '../../domain/pacing.js';
import { placeInLedger, reportDedupeKey, round, type LedgerEntry, type ReportKind } from '../../domain/report-ledger.js';
import type { TrackingPolicy } from '../../domain/media-buy-timers.js';
import type { MediaBuyRow, Store } from '../../store/index.js';
import { newReportId, type ReportRow } from '../../store/media-buy-reports-repo.js';
import type { BuyPlan, MediaBuyPatch } from '../../store/media-buys-repo.js';
import type { Tx } from '../../store/tx.js';

export type ReportSource = 'webhook' | 'poll';

/** What became of one report: counted, already known, or stored but outranked by a later report of its period. */
export type ReportOutcome = 'applied' | 'duplicate' | 'superseded';

export interface ReportInput {
  reading: DeliveryReading;
  row: BuyDelivery;
  source: ReportSource;
  /** The stored fire it came in (null for a poll). */
  fireId: string | null;
}

export interface ApplyContext {
  store: Store;
  tracking: TrackingPolicy;
  random: () => number;
}

/** The report row a buy's row of a reading makes (not yet stored). */
export function reportRowFor(buy: MediaBuyRow, input: ReportInput, now: number): ReportRow {
  const { reading, row, source } = input;
  const kind: ReportKind = source === 'poll' ? 'snapshot' : 'period';
  const notificationType = kind === 'snapshot' ? null : reading.notificationType;
  const sequenceNumber = kind === 'snapshot' ? null : (reading.sequenceNumber ?? null);
  return {
    id: newReportId(),
    buy_id: buy.id,
    tenant_id: buy.tenant_id,
    source,
    kind,
    notification_type: notificationType,
    sequence_number: sequenceNumber,
    period_start: reading.period.start,
    period_end: reading.period.end,
    impressions: row.impressions,
    spend: row.spend,
    clicks: row.clicks ?? null,
    currency: reading.currency ?? buy.currency,
    by_package: JSON.stringify(row.byPackage),
    status: row.status ?? null,
    is_adjusted: row.isAdjusted || reading.notificationType === 'adjusted' ? 1 : 0,
    dedupe_key: reportDedupeKey({ kind, notificationType, sequenceNumber, period: reading.period, spend: row.spend, impressions: row.impressions }),
    superseded_by: null,
    fire_id: input.fireId,
    received_at: now,
  };
}

/** What `decideReport` needs read from the store, besides the buy: all as they were before the report was stored. */
export interface ReportReads {
  /** The buy's counted period reports (nothing supersedes them), the new report not among them. */
  live: LedgerEntry[];
  /** The buy's newest poll snapshot, if any. */
  snapshot: ReportRow | undefined;
  /** The pacing thresholds of the buy's tenant. */
  thresholds: PacingThresholds;
}

/** What a stored report changes: the buy's plan, and the ledger's writes that go with it. */
export interface ReportDecision {
  plan: BuyPlan<ReportOutcome>;
  /** A later report of its period that outranks the new one (it is stored superseded by it). */
  outranked: string | null;
  /** The reports the new one supersedes. */
  replaced: string[];
  /** A governed buy's counted period: its delivery outcome goes to the outbox. */
  queueOutcome: boolean;
}

/**
 * The decision for a report newly stored (not a duplicate), from what was read: pure, so the
 * one-report path (`planReport`) and the batched fires (report-batch.ts) decide alike.
 */
export function decideReport(ctx: Pick<ApplyContext, 'tracking' | 'random'>, buy: MediaBuyRow, input: ReportInput, report: ReportRow, reads: ReportReads, now: number): ReportDecision {
  const { reading, row, source } = input;
  const kind = report.kind as ReportKind;
  const notificationType = report.notification_type;
  const sequenceNumber = report.sequence_number;

  let outranked: string | null = null;
  let replaced: string[] = [];
  let periods = reads.live;
  if (kind === 'period') {
    const place = placeInLedger({ notificationType: reading.notificationType, sequenceNumber, period: reading.period }, reads.live);
    outranked = place.supersededBy;
    replaced = place.supersedes;
    periods = [...reads.live.filter((e) => !replaced.includes(e.id)), ...(outranked ? [] : [ledgerEntryOf(report)])];
  }

  const snapshot = reads.snapshot;
  const figures = deliveryFigures(
    periods,
    snapshot ? { impressions: snapshot.impressions, spend: snapshot.spend, clicks: snapshot.clicks, period_end: snapshot.period_end, by_package: JSON.parse(snapshot.by_package) } : null,
  );
  // A restatement of a period the latest poll already covers changes the seller's own figure: read it again.
  const restatesPolled = kind === 'period' && snapshot !== undefined && reading.period.start < snapshot.period_end && replaced.length > 0;
  const packages = packagesWithDelivery(withReportedPackages(JSON.parse(buy.packages) as PackageState[], row.byPackage), figures.byPackage);
  // Judged on whole figures only: a reading the seller says is partial keeps the pacing the buy had (pacing.ts).
  const judgeable = judgeableReading({
    notificationType: reading.notificationType,
    partialData: reading.partialData,
    ...(row.status !== undefined ? { rowStatus: row.status } : {}),
    figuresPartial: figuresArePartial(periods, snapshot),
  });
  const before: Pacing = { state: buy.pacing_state as PacingState, ratio: buy.pacing_ratio, expected_spend: buy.pacing_expected };
  const { pacing, alert } = nextPacing(before, buyPacing(buy, figures, packages, reads.thresholds), judgeable);

  const patch: MediaBuyPatch = {
    packages: JSON.stringify(packages),
    impressions: figures.impressions,
    spend: figures.spend,
    clicks: figures.clicks,
    delivered_through: figures.through,
    delivery_source: figures.source,
    delivery_updated_at: now,
    pacing_state: pacing.state,
    pacing_ratio: pacing.ratio,
    pacing_expected: pacing.expected_spend,
    ...(buy.currency === null && reading.currency ? { currency: reading.currency } : {}),
  };
  const events: NewEventSpec[] = [
    {
      source,
      kind: 'report_received',
      detail: {
        report_id: report.id,
        notification_type: kind === 'snapshot' ? 'snapshot' : notificationType,
        sequence_number: sequenceNumber,
        period: { start: new Date(reading.period.start).toISOString(), end: new Date(reading.period.end).toISOString() },
        impressions: row.impressions,
        spend: row.spend,
        ...(replaced.length > 0 ? { supersedes: replaced } : {}),
        ...(outranked ? { superseded_by: outranked } : {}),
      },
    },
  ];

  let gap = false;
  if (kind === 'period') {
    patch.reports_received = buy.reports_received + 1;
    const seq = sequencePart(buy, reading.sequenceNumber, source);
    Object.assign(patch, seq.patch);
    events.push(...seq.events);
    gap = (seq.gap && buy.gap_open === 0) || restatesPolled;
  }
  const status = statusPart(buy, row.status, source);
  if (status) {
    Object.assign(patch, status.patch);
    events.push(...status.events);
  }
  const after = { ...buy, ...patch } as MediaBuyRow;
  Object.assign(
    patch,
    kind === 'period'
      ? timersAfterReport(after, { fire: true, final: reading.notificationType === 'final', nextExpectedAt: reading.nextExpectedAt, gap }, ctx.tracking, now)
      : timersAfterDeliveryRead(after, ctx.tracking, now, ctx.random),
  );
  events.push(...pacingEvents(before.state, pacing, alert, source));

  return {
    plan: { patch, events: events.map((e) => ({ ...e, at: now })), value: outranked ? 'superseded' : 'applied' },
    outranked,
    replaced,
    queueOutcome: kind === 'period' && !outranked && Boolean(buy.governance && buy.governance_context_enc),
  };
}

/** A stored period report as the ledger sees it. */
function ledgerEntryOf(report: ReportRow): LedgerEntry {
  return {
    id: report.id,
    kind: 'period',
    notification_type: report.notification_type,
    sequence_number: report.sequence_number,
    period_start: report.period_start,
    period_end: report.period_end,
    impressions: report.impressions,
    spend: report.spend,
    clicks: report.clicks,
    by_package: JSON.parse(report.by_package) as LedgerEntry['by_package'],
    received_at: report.received_at,
    superseded_by: null,
    status: report.status,
  };
}

/** The plan for MediaBuysRepo.mutateIn: stores the report (its reads and writes one by one) and decides the buy's change. */
export async function planReport(ctx: ApplyContext, trx: Tx, buy: MediaBuyRow, input: ReportInput, now: number): Promise<BuyPlan<ReportOutcome>> {
  const report = reportRowFor(buy, input, now);
  if (!(await ctx.store.reports.insertIn(trx, report))) {
    // Known already; a poll that read it again is still a read done (its timer must move on).
    return { patch: input.source === 'poll' ? timersAfterDeliveryRead(buy, ctx.tracking, now, ctx.random) : undefined, value: 'duplicate' };
  }
  // Read after the insert (as ever): the new report is among them when it is a period, and left out here.
  const live = (await ctx.store.reports.livePeriodsIn(trx, buy.id)).filter((e) => e.id !== report.id);
  const snapshot = await ctx.store.reports.latestSnapshotIn(trx, buy.id);
  const thresholds = (await ctx.store.settings.forTenantIn(buy.tenant_id, trx)).pacing ?? DEFAULT_PACING;
  const decided = decideReport(ctx, buy, input, report, { live, snapshot, thresholds }, now);
  if (decided.outranked) await ctx.store.reports.supersedeIn(trx, [report.id], decided.outranked);
  await ctx.store.reports.supersedeIn(trx, decided.replaced, report.id);
  // A governed buy's counted periods go to its governance agent, each with a fresh key.
  if (decided.queueOutcome) await queueDeliveryOutcome(ctx, trx, buy, report, now);
  return decided.plan;
}

function pacingEvents(before: PacingState, pacing: Pacing, alert: 'under' | 'over' | null, source: string): NewEventSpec[] {
  if (before === pacing.state) return [];
  const detail = { state: pacing.state, from: before, ratio: pacing.ratio, expected_spend: pacing.expected_spend };
  // Crossing into under or over is an alert (one notification); anything else is recorded only.
  return [{ source, kind: alert ? 'pacing_alert' : 'pacing_changed', detail }];
}

/**
 * The report_plan_outcome `delivery` arguments for a period. `delivery.impressions` is an integer
 * there, while a seller's report may count them fractionally (its delivery metrics are numbers):
 * rounded, or the governance agent's schema refuses the report.
 */
export function deliveryOutcomeRequest(key: string, planId: string, governanceContext: string | null, report: Pick<ReportRow, 'period_start' | 'period_end' | 'impressions' | 'spend'>) {
  const cpm = report.impressions > 0 ? round((report.spend / report.impressions) * 1000) : 0;
  return {
    idempotency_key: key,
    plan_id: planId,
    // Sealed as stored on the buy; opened only to be sent.
    governance_context: governanceContext,
    outcome: 'delivery',
    delivery: {
      reporting_period: { start: new Date(report.period_start).toISOString(), end: new Date(report.period_end).toISOString() },
      impressions: Math.round(report.impressions),
      spend: report.spend,
      cpm,
    },
  };
}

/** The report_plan_outcome `delivery` arguments for a period, stored once: every attempt sends the same key and bytes. */
export async function queueDeliveryOutcome(ctx: ApplyContext, trx: Tx, buy: MediaBuyRow, report: ReportRow, now: number): Promise<void> {
  const governance = JSON.parse(buy.governance!) as { agent_id: string; plan_id: string };
  const request = deliveryOutcomeRequest(randomUUID(), governance.plan_id, buy.governance_context_enc, report);
  await ctx.store.deliveryOutcomes.insertIn(trx, {
    id: `dlo_${randomUUID()}`,
    buy_id: buy.id,
    tenant_id: buy.tenant_id,
    report_id: report.id,
    governance_agent_id: governance.agent_id,
    request: JSON.stringify(request),
    status: 'pending',
    outcome_id: null,
    findings: null,
    error: null,
    next_attempt_at: now,
    attempt: 0,
    lease_owner: null,
    lease_until: null,
    lease_epoch: 0,
    created_at: now,
    reported_at: null,
  });
}
