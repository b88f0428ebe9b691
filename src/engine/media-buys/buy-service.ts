/**
 * What people do with a live buy (README, Media buys), for the API, the
 * dashboard, the CLI and the MCP server alike: read it (one, a page, its
 * reports), pause and resume it at the seller, and refresh it now.
 *
 * Pause and resume are `update_media_buy` with `paused`, each a durable child
 * operation of the buy's create (its own key, retries and history), never
 * governed: they commit no new spend. Refresh asks the seller now, as two
 * operations (`get_media_buys`, `get_media_buy_delivery`) whose answers are
 * applied to the buy in the commit that ends them (buy-recorder.ts). Each
 * request is recorded on the buy with the key's name.
 */
import { getMediaBuyDeliveryArgs, getMediaBuysArgs } from '../../adcp/media-buy-reads.js';
import { isTerminalBuyStatus } from '../../domain/media-buy-status.js';
import { ledgerTotals } from '../../domain/report-ledger.js';
import type { MediaBuyRow, OperationRow, Store } from '../../store/index.js';
import type { KeyReservation } from '../../store/idempotency-repo.js';
import type { BuyListFilters } from '../../store/media-buys-repo.js';
import type { ReportRow } from '../../store/media-buy-reports-repo.js';
import { buyChange, type ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import { EngineError } from '../errors.js';
import type { OperationService } from '../operation-service.js';

export interface BuyRequest {
  tenantId: string;
  buyId: string;
  actor: string;
  /** The client's Idempotency-Key: the same key reaches the same operation(s), and the seller the same AdCP key. */
  clientKey?: string;
  /** Pause and resume: that key, reserved in the commit that stores the operation (an MCP tool's idempotency_key). */
  reservation?: KeyReservation;
  /** Pause and resume: how long to wait for the seller's first reply (default ADCP_ORCH_SYNC_WAIT_MS; 0 for an MCP task). */
  waitMs?: number;
}

export interface DeliveryView {
  reports: ReportRow[];
  totals: { impressions: number; spend: number; clicks: number | null; currency: string | null; periods: number; through: number | null };
}

export class MediaBuyService {
  constructor(
    private readonly deps: { store: Store; operations: OperationService; bus: ChangeBus; clock: Clock },
  ) {}

  async get(tenantId: string, id: string): Promise<MediaBuyRow> {
    const buy = await this.deps.store.mediaBuys.getForTenant(tenantId, id);
    if (!buy) throw new EngineError('media_buy_not_found', `media buy ${id} not found`, 404);
    return buy;
  }

  list(tenantId: string, filters: BuyListFilters, limit: number, cursor?: { createdAt: number; id: string }): Promise<MediaBuyRow[]> {
    return this.deps.store.mediaBuys.list(tenantId, filters, limit, cursor);
  }

  /** Its reports oldest first, and totals that count each period once (src/domain/report-ledger.ts). */
  async delivery(tenantId: string, id: string): Promise<DeliveryView> {
    const buy = await this.get(tenantId, id);
    const reports = await this.deps.store.reports.forBuy(buy.id);
    const totals = ledgerTotals(reports.map((r) => ({ ...r, kind: r.kind as 'period' | 'snapshot', by_package: JSON.parse(r.by_package) })));
    return { reports, totals: { impressions: totals.impressions, spend: totals.spend, clicks: totals.clicks, currency: buy.currency, periods: totals.periods, through: totals.through } };
  }

  pause(req: BuyRequest): Promise<OperationRow> {
    return this.setPaused(req, true);
  }

  resume(req: BuyRequest): Promise<OperationRow> {
    return this.setPaused(req, false);
  }

  private async setPaused(req: BuyRequest, paused: boolean): Promise<OperationRow> {
    const buy = await this.live(req);
    if (paused && buy.status === 'paused') throw new EngineError('already_paused', `media buy ${buy.id} is already paused`, 409, { status: buy.status });
    if (!paused && buy.status !== 'paused') throw new EngineError('not_paused', `media buy ${buy.id} is ${buy.status}, not paused: there is nothing to resume`, 409, { status: buy.status });
    const op = await this.deps.operations.createAndStart(
      {
        tenantId: buy.tenant_id,
        agentId: buy.agent_id,
        task: 'update_media_buy',
        params: { ...this.account(buy), media_buy_id: buy.media_buy_id, paused },
        parentId: buy.operation_id,
        actor: req.actor,
        ...(req.clientKey ? { clientKey: `${paused ? 'pause' : 'resume'}:${buy.id}:${req.clientKey}` } : {}),
        ...(req.reservation ? { reservation: req.reservation } : {}),
      },
      req.waitMs,
    );
    await this.note(buy, paused ? 'pause_requested' : 'resume_requested', req.actor, { operation_id: op.id });
    return op;
  }

  /** `get_media_buys` and `get_media_buy_delivery` now, as operations; each answer is applied to the buy as it ends. */
  async refresh(req: BuyRequest): Promise<OperationRow[]> {
    const buy = await this.get(req.tenantId, req.buyId);
    const query = { mediaBuyIds: [buy.media_buy_id], ...(buy.account !== null ? { account: JSON.parse(buy.account) as unknown } : {}) };
    const reads: Array<[string, Record<string, unknown>]> = [
      ['get_media_buys', getMediaBuysArgs(query)],
      ['get_media_buy_delivery', getMediaBuyDeliveryArgs(query)],
    ];
    const ops: OperationRow[] = [];
    for (const [task, params] of reads) {
      ops.push(
        await this.deps.operations.createAndStart({
          tenantId: buy.tenant_id,
          agentId: buy.agent_id,
          task,
          params,
          parentId: buy.operation_id,
          actor: req.actor,
          ...(req.clientKey ? { clientKey: `refresh:${buy.id}:${task}:${req.clientKey}` } : {}),
        }),
      );
    }
    await this.note(buy, 'refresh_requested', req.actor, { operation_ids: ops.map((o) => o.id) });
    return ops;
  }

  /** A buy that can still be changed at the seller. */
  private async live(req: BuyRequest): Promise<MediaBuyRow> {
    const buy = await this.get(req.tenantId, req.buyId);
    if (isTerminalBuyStatus(buy.status)) throw new EngineError('media_buy_ended', `media buy ${buy.id} is ${buy.status}: it can no longer be changed`, 409, { status: buy.status });
    return buy;
  }

  private account(buy: MediaBuyRow): Record<string, unknown> {
    return buy.account !== null ? { account: JSON.parse(buy.account) as unknown } : {};
  }

  private async note(buy: MediaBuyRow, kind: string, actor: string, detail: Record<string, unknown>): Promise<void> {
    const result = await this.deps.store.mediaBuys.mutate(buy.id, null, () => ({ events: [{ source: 'user', kind, actor, detail }], value: null }), this.deps.clock.now());
    if (result.outcome === 'applied') this.deps.bus.publishBuy(buyChange(result));
  }
}
