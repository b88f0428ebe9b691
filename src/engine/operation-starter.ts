/**
 * Starting an operation on a person's or a program's request, whichever door it came
 * through (POST /v1/operations, POST /v1/media-buys, the MCP tools run_task and
 * create_media_buy): the governance check of a governed spend, the tenant's spend
 * approval rule, then the durable create-and-send. One place, so no door can skip a
 * check another applies.
 */
import type { OperationRow } from '../store/index.js';
import type { KeyReservation } from '../store/idempotency-repo.js';
import { EngineError } from './errors.js';
import type { GovernanceGuard, GovernanceRequest } from './governance/governed-ops.js';
import type { OperationService, WebhookMode } from './operation-service.js';
import type { SpendApproval } from './spend-approval.js';
import type { ReportingAsked } from './media-buys/reporting-choice.js';

export interface StartRequest {
  tenantId: string;
  agentId: string;
  task: string;
  params: Record<string, unknown>;
  webhook?: WebhookMode;
  governance?: GovernanceRequest;
  /** `required`: hold the buy for a person's approval before anything is sent. */
  approval?: 'required';
  /** The client's idempotency key (the AdCP key is derived from it). */
  clientKey?: string;
  /** Who asked: the API key's name, recorded on the `created` event. */
  actor: string;
  /** The client's key reserved in the commit that stores the operation. */
  reservation?: KeyReservation;
  /** A media buy's reporting webhook as the caller asked for it (frequency, authentication). */
  reportingAsked?: ReportingAsked;
}

export interface StartOptions {
  /** How long to wait for the first reply before answering (default: the engine's ADCP_ORCH_SYNC_WAIT_MS). */
  waitMs?: number;
}

export class OperationStarter {
  constructor(
    private readonly operations: OperationService,
    private readonly spendApproval?: SpendApproval,
    /** Absent where no governance flow runs: a governed request is then refused, never sent ungoverned. */
    private readonly guard?: GovernanceGuard,
  ) {}

  async start(req: StartRequest, options: StartOptions = {}): Promise<OperationRow> {
    let params = req.params;
    let governance;
    if (req.governance) {
      // Accepting the field without the check would spend without the check the caller asked for.
      if (!this.guard) throw new EngineError('governance_not_supported', 'this server runs no governance flow', 501);
      const prepared = await this.guard.prepare(req.tenantId, req.agentId, req.task, req.params, req.governance, req.webhook);
      params = prepared.params;
      governance = prepared.governance;
    }
    const hold = await this.spendApproval?.holdFor(req.tenantId, req.task, params, req.approval);
    return this.operations.createAndStart(
      {
        tenantId: req.tenantId,
        agentId: req.agentId,
        task: req.task,
        params,
        webhook: req.webhook,
        actor: req.actor,
        ...(req.clientKey !== undefined ? { clientKey: req.clientKey } : {}),
        ...(hold ? { hold } : {}),
        ...(governance ? { governance } : {}),
        ...(req.reservation ? { reservation: req.reservation } : {}),
        ...(req.reportingAsked ? { reportingAsked: req.reportingAsked } : {}),
      },
      options.waitMs,
    );
  }
}
