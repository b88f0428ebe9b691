/**
 * Sending creatives to a live buy's seller (README, Creatives): `POST
 * /v1/media-buys/:id/creatives`, and a person's corrected creatives answering a
 * rejection (creative-answers.ts) go through the same checks.
 *
 * A send is one durable `sync_creatives` operation, a child of the buy's create
 * (its own key, retries, webhook and history; `submitted` tracked like any task).
 * Its creatives are recorded on the buy in the commit that stores it
 * (creative-recorder.ts), and their reviews followed from then on
 * (creative-tracker.ts). Bad input is refused before anything is stored or sent.
 */
import { checkSyncInput, isSyncProblem, type SyncInput } from '../../domain/creative-request.js';
import { presentCreative, type CreativeJson } from '../../domain/creatives.js';
import { isTerminalBuyStatus } from '../../domain/media-buy-status.js';
import type { PackageState } from '../../domain/media-buy-delivery.js';
import type { MediaBuyRow, OperationRow, Store } from '../../store/index.js';
import type { KeyReservation } from '../../store/idempotency-repo.js';
import { EngineError } from '../errors.js';
import type { OperationService } from '../operation-service.js';
import type { MediaBuyService } from './buy-service.js';

export interface CreativesRequest {
  tenantId: string;
  buyId: string;
  actor: string;
  creatives: unknown;
  assignments?: unknown;
  /** The client's Idempotency-Key: the same key reaches the same operation, and the seller the same AdCP key. */
  clientKey?: string;
  reservation?: KeyReservation;
  /** How long to wait for the seller's first reply (default ADCP_ORCH_SYNC_WAIT_MS). */
  waitMs?: number;
}

/** The buy's package ids, as last known (create reply, status reads). */
export function packageIdsOf(buy: Pick<MediaBuyRow, 'packages'>): string[] {
  return (JSON.parse(buy.packages) as PackageState[]).map((p) => p.package_id);
}

/** The checks both a send and a correction pass: a live buy, creatives that name themselves, assignments to its packages. */
export function checkedSend(buy: MediaBuyRow, input: { creatives?: unknown; assignments?: unknown }): SyncInput {
  if (isTerminalBuyStatus(buy.status)) throw new EngineError('media_buy_ended', `media buy ${buy.id} is ${buy.status}: creatives can no longer be sent to it`, 409, { status: buy.status });
  const checked = checkSyncInput(input, packageIdsOf(buy));
  if (isSyncProblem(checked)) throw new EngineError(checked.code, checked.message, checked.status, checked.details);
  return checked;
}

/** The sync_creatives arguments for this buy: its account, the creatives, their assignments. */
export function syncParams(buy: MediaBuyRow, input: SyncInput): Record<string, unknown> {
  return {
    ...(buy.account !== null ? { account: JSON.parse(buy.account) as unknown } : {}),
    creatives: input.creatives,
    ...(input.assignments ? { assignments: input.assignments } : {}),
  };
}

export class CreativeService {
  constructor(private readonly deps: { store: Store; operations: OperationService; mediaBuys: MediaBuyService }) {}

  /** Sends creatives to the buy's seller: the sync_creatives operation (202 with it). */
  async sync(req: CreativesRequest): Promise<OperationRow> {
    const buy = await this.deps.mediaBuys.get(req.tenantId, req.buyId);
    const input = checkedSend(buy, { creatives: req.creatives, assignments: req.assignments });
    return this.deps.operations.createAndStart(
      {
        tenantId: buy.tenant_id,
        agentId: buy.agent_id,
        task: 'sync_creatives',
        params: syncParams(buy, input),
        parentId: buy.operation_id,
        actor: req.actor,
        ...(req.clientKey ? { clientKey: `creatives:${buy.id}:${req.clientKey}` } : {}),
        ...(req.reservation ? { reservation: req.reservation } : {}),
      },
      req.waitMs,
    );
  }

  /** The buy's creatives as `GET /v1/media-buys/:id` shows them. */
  async list(buyId: string): Promise<CreativeJson[]> {
    return (await this.deps.store.creatives.forBuy(buyId)).map(presentCreative);
  }
}
