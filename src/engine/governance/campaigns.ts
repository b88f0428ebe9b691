/**
 * Campaigns (POST /v1/campaigns): one plan, buys across sellers, each its own
 * governed operation with its own check and its own token (one token per seller
 * audience), `parent_id` = the campaign. Everything is checked before anything
 * is stored; the campaign and all its buys are then stored in one commit, so a
 * campaign is never half created, and each buy is started (its check first).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { presentCampaign } from '../../domain/campaign.js';
import { presentOperation } from '../../domain/operation-json.js';
import type { CampaignRow, OperationRow, Store, Written } from '../../store/index.js';
import { isUniqueViolation } from '../../store/db.js';
import type { SecretBox } from '../../store/secret-box.js';
import { inWriteTransaction } from '../../store/tx.js';
import type { ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import { EngineError, notFound } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { buildOperation, type BuiltOperation, type WebhookMode } from '../operation-builder.js';
import { chooseReporting, withReportingChoice } from '../media-buys/reporting-choice.js';
import type { OperationService } from '../operation-service.js';
import type { SpendApproval } from '../spend-approval.js';
import type { GovernanceFlow } from './flow.js';
import type { GovernanceGuard, GovernanceRequest } from './governed-ops.js';

export interface CampaignInput {
  name?: string;
  governance: GovernanceRequest;
  buys: Array<{ agent_id: string; request: Record<string, unknown>; webhook?: WebhookMode }>;
}

export interface CampaignDeps {
  store: Store;
  secrets: SecretBox;
  bus: ChangeBus;
  operations: OperationService;
  flow: GovernanceFlow;
  guard: GovernanceGuard;
  spendApproval: SpendApproval;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
}

export type CampaignJson = ReturnType<typeof presentCampaign>;

export class CampaignService {
  constructor(private readonly deps: CampaignDeps) {}

  async create(tenantId: string, input: CampaignInput, actor: string, clientKey?: string): Promise<CampaignJson> {
    const { store, guard, operations, secrets, clock, spendApproval } = this.deps;
    await guard.checkGovernance(tenantId, input.governance);
    // The same client key is the same campaign (a retry after our answer was lost, even across a crash).
    const id = clientKey ? derivedId(tenantId, clientKey) : `cmp_${randomUUID()}`;
    if (await store.campaigns.get(id)) return this.view(tenantId, id);
    const now = clock.now();
    const children: BuiltOperation[] = [];
    for (const [i, buy] of input.buys.entries()) {
      const prepared = await atBuy(i, () => guard.prepare(tenantId, buy.agent_id, 'create_media_buy', buy.request, input.governance, buy.webhook));
      // The tenant's own spend rule holds a campaign's buys like any other.
      const hold = await spendApproval.holdFor(tenantId, 'create_media_buy', prepared.params);
      // Every buy carries our reporting webhook, unless the tenant polls governed buys (reporting-choice.ts).
      const choice = await chooseReporting(store, { tenantId, agentId: buy.agent_id, params: prepared.params, governed: true, publicUrl: operations.options.publicUrl });
      const buyInput = withReportingChoice(
        {
          tenantId,
          agentId: buy.agent_id,
          task: 'create_media_buy',
          params: prepared.params,
          ...(buy.webhook ? { webhook: buy.webhook } : {}),
          parentId: id,
          actor,
          governance: prepared.governance,
          ...(clientKey ? { clientKey: `${clientKey}:buy:${i}` } : {}),
          ...(hold ? { hold } : {}),
        },
        choice,
      );
      children.push(await atBuy(i, () => buildOperation(buyInput, prepared.seller, secrets, { ...operations.options, leaseMs: operations.leaseMs }, now, true)));
    }
    const row: CampaignRow = {
      id,
      tenant_id: tenantId,
      name: input.name ?? null,
      governance_agent_id: input.governance.agent_id,
      plan_id: input.governance.plan_id,
      status: 'running',
      buy_ids: JSON.stringify(children.map((c) => c.row.id)),
      created_at: now,
      updated_at: now,
      completed_at: null,
      created_by: actor,
    };
    let written: Written[];
    try {
      written = await inWriteTransaction(store.db, async (trx) => {
        await store.campaigns.insertIn(trx, row);
        const out: Written[] = [];
        for (const child of children) out.push(await store.operations.insertIn(trx, child.row, child.events));
        return out;
      });
    } catch (err) {
      // Two requests under one client key at once: the other one stored it.
      if (isUniqueViolation(err) && (await store.campaigns.get(id))) return this.view(tenantId, id);
      throw err;
    }
    children.forEach((child, i) => {
      this.deps.bus.publish({ operation: child.row, ...written[i]! });
      this.deps.metrics.transition(child.row.type, 'none', 'requested', 'user');
    });
    for (const child of children) {
      // Each buy's check starts now; a crash leaves them due, and the scheduler runs them.
      if (this.deps.flow.handles(child.row.check_kind)) {
        this.deps.flow.run(child.row).catch((err) => this.deps.log.error({ err, operation_id: child.row.id }, 'starting a campaign buy failed; its timer retries it'));
      }
    }
    this.deps.log.info({ campaign_id: id, buys: children.length, plan_id: row.plan_id }, 'campaign created');
    return presentCampaign(row, children.map((c) => c.row), (b) => presentOperation(b));
  }

  async view(tenantId: string, id: string): Promise<CampaignJson> {
    const row = await this.deps.store.campaigns.getForTenant(tenantId, id);
    if (!row) throw notFound('campaign', id);
    return presentCampaign(row, await buysOf(this.deps.store, row), (b: OperationRow) => presentOperation(b));
  }

  async list(tenantId: string, limit: number, cursor?: { createdAt: number; id: string }): Promise<{ rows: CampaignRow[]; campaigns: CampaignJson[] }> {
    const rows = await this.deps.store.campaigns.list(tenantId, limit, cursor);
    const buys = await buysOfMany(this.deps.store, rows);
    const campaigns = rows.map((row) => presentCampaign(row, buys.get(row.id) ?? [], (b: OperationRow) => presentOperation(b)));
    return { rows, campaigns };
  }
}

/** A campaign's buys in the order they were asked for. */
export async function buysOf(store: Store, campaign: CampaignRow): Promise<OperationRow[]> {
  return inAskedOrder(campaign, await store.operations.childrenOf(campaign.id));
}

/** The buys of a page of campaigns, read in one query (not one per campaign), each list in the order asked for. */
export async function buysOfMany(store: Store, campaigns: readonly CampaignRow[]): Promise<Map<string, OperationRow[]>> {
  const byParent = new Map<string, OperationRow[]>(campaigns.map((c) => [c.id, []]));
  for (const child of await store.operations.childrenOfMany(campaigns.map((c) => c.id))) byParent.get(child.parent_id!)?.push(child);
  for (const c of campaigns) byParent.set(c.id, inAskedOrder(c, byParent.get(c.id)!));
  return byParent;
}

function inAskedOrder(campaign: CampaignRow, children: OperationRow[]): OperationRow[] {
  const order = new Map((JSON.parse(campaign.buy_ids) as string[]).map((id, i) => [id, i]));
  return children.sort((a, b) => (order.get(a.id) ?? order.size) - (order.get(b.id) ?? order.size));
}

function derivedId(tenantId: string, clientKey: string): string {
  return `cmp_${createHash('sha256').update(`campaign\0${tenantId}\0${clientKey}`).digest('hex').slice(0, 32)}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `work` for the campaign's buy `i`: an error it raises names that buy. */
async function atBuy<T>(i: number, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof EngineError) throw new EngineError(err.code, `buys[${i}]: ${err.message}`, err.httpStatus, { buy: i, ...(isObject(err.details) ? err.details : {}) });
    throw err;
  }
}
