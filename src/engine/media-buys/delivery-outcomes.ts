/**
 * Delivery outcomes to governance (the AdCP spec, governance): for a governed
 * buy, every counted period (new, adjusted, and the final one) is reported with
 * `report_plan_outcome` `outcome: "delivery"`, `delivery: {reporting_period,
 * impressions, spend, cpm}`, each with a fresh `idempotency_key`.
 *
 * The same durable outbox as the completed/failed outcome of the buy's create
 * (src/engine/governance/outcome-report.ts): the arguments are stored with the
 * report, in its transaction, and resent with the same key and bytes until the
 * agent takes them (`accepted`, or `findings`: kept, and people are told with
 * `media_buy.governance_findings`). An answer saying the report itself is wrong
 * cannot get better by resending: kept as `refused`, recorded on the buy.
 * A delivery is reported only after the buy's own commitment was: the plan's
 * ledger must have the spend committed before it hears how it is spent.
 */
import type { Logger } from 'pino';
import { retriedWithinBudgetOnly } from '../../adcp/recovery.js';
import type { AdcpClient, TaskReply } from '../../adcp/types.js';
import { parseGovernance } from '../../domain/governed-flow.js';
import { retryDelayMs } from '../../domain/timing.js';
import type { Store } from '../../store/index.js';
import type { OutcomePatch, OutcomeRow } from '../../store/media-buy-outcomes-repo.js';
import type { Lease } from '../../store/operations-repo.js';
import type { SecretBox } from '../../store/secret-box.js';
import { inWriteTransaction } from '../../store/tx.js';
import { endpointFor } from '../agent-endpoints.js';
import type { AgentBreakers } from '../breakers.js';
import { buyChange, type ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import type { Metrics } from '../metrics.js';
import { outcomeReplyStatus } from '../governance/outcome-report.js';
import { GovernanceTokens } from '../governance/sealed-tokens.js';
import { failureOf, type CallFailure } from '../governance/step-writes.js';

export interface DeliveryOutcomeDeps {
  store: Store;
  adcp: AdcpClient;
  secrets: SecretBox;
  bus: ChangeBus;
  breakers: AgentBreakers;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  callTimeoutMs: number;
  /** ADCP_ORCH_RETRY_ATTEMPTS: the tries an error code we do not know gets (retriedWithinBudgetOnly). Default 3. */
  maxAttempts?: number;
}

/** How long a delivery waits, each time, for the buy's own commitment to be reported first. */
const AFTER_COMMITMENT_MS = 1_000;

export class DeliveryOutcomes {
  private readonly tokens: GovernanceTokens;

  constructor(private readonly deps: DeliveryOutcomeDeps) {
    this.tokens = new GovernanceTokens(deps.secrets);
  }

  async run(row: OutcomeRow): Promise<void> {
    const lease: Lease = { owner: row.lease_owner ?? '', epoch: row.lease_epoch };
    const now = this.deps.clock.now();
    if (await this.commitmentPending(row)) {
      // Not an attempt: wait for the commitment without using up the retry budget.
      await this.finish(row, lease, { next_attempt_at: now + AFTER_COMMITMENT_MS, attempt: Math.max(0, row.attempt - 1) });
      return;
    }
    const agent = await this.deps.store.agents.get(row.governance_agent_id);
    if (!agent) {
      await this.refuse(row, lease, { error: { code: 'GOVERNANCE_AGENT_NOT_FOUND', message: `governance agent ${row.governance_agent_id} was removed` }, transient: false });
      return;
    }
    const request = this.tokens.openedRequest(JSON.parse(row.request) as Record<string, unknown>);
    let reply: TaskReply;
    try {
      reply = await this.deps.breakers.execute(agent.id, agent.name, () =>
        this.deps.adcp.callTask(endpointFor(agent, this.deps.secrets), 'report_plan_outcome', request, { timeoutMs: this.deps.callTimeoutMs }),
      );
    } catch (err) {
      this.deps.metrics.agentCall(agent.name, 'report_plan_outcome', 'transport_error');
      await this.retry(row, lease, failureOf(err));
      return;
    }
    this.deps.metrics.agentCall(agent.name, 'report_plan_outcome', reply.error ? 'error' : 'ok');
    if (reply.error || reply.status === 'failed' || reply.status === 'rejected' || reply.status === 'canceled') {
      const error = reply.error ?? { code: reply.status.toUpperCase(), message: reply.message };
      const failure = { error, transient: error.recovery === undefined || error.recovery === 'transient' };
      await (failure.transient ? this.retry(row, lease, failure) : this.refuse(row, lease, failure));
      return;
    }
    const status = outcomeReplyStatus(reply.data);
    if (typeof reply.data.outcome_id !== 'string' || !status) {
      await this.retry(row, lease, { error: { code: 'NO_OUTCOME', message: 'the reply carries no outcome_id and status' }, transient: true });
      return;
    }
    const findings = Array.isArray(reply.data.findings) && reply.data.findings.length > 0 ? reply.data.findings : null;
    const done = await this.finish(
      row,
      lease,
      { status, outcome_id: reply.data.outcome_id, findings: findings ? JSON.stringify(findings) : null, error: null, next_attempt_at: null, reported_at: this.deps.clock.now() },
      findings ? { kind: 'governance_findings', detail: { outcome_id: reply.data.outcome_id, report_id: row.report_id, findings } } : undefined,
    );
    if (done) this.deps.metrics.governanceOutcome('delivery', status);
  }

  /** Whether the create's own outcome (the commitment) is still owed to the governance agent. */
  private async commitmentPending(row: OutcomeRow): Promise<boolean> {
    const buy = await this.deps.store.mediaBuys.get(row.buy_id);
    const op = buy ? await this.deps.store.operations.get(buy.operation_id) : undefined;
    return parseGovernance(op?.governance)?.outcome?.status === 'pending';
  }

  private async retry(row: OutcomeRow, lease: Lease, failure: CallFailure): Promise<void> {
    // An outcome is resent until taken, except past the budget on a code we do not know: its
    // `transient` is a default the spec bounds (recovery.ts), so it is kept as refused, on the buy.
    if (retriedWithinBudgetOnly(failure.error) && row.attempt >= (this.deps.maxAttempts ?? 3)) return this.refuse(row, lease, failure);
    const wait = retryDelayMs(Math.min(row.attempt, 7), failure.error.retryAfterSeconds, this.deps.clock.random);
    this.deps.log.warn({ outcome_id: row.id, buy_id: row.buy_id, error: failure.error.code, retry_in_ms: wait }, 'delivery outcome not taken by the governance agent; will retry');
    await this.finish(row, lease, { next_attempt_at: this.deps.clock.now() + wait, error: JSON.stringify(failure.error) });
  }

  private async refuse(row: OutcomeRow, lease: Lease, failure: CallFailure): Promise<void> {
    const done = await this.finish(row, lease, { status: 'refused', next_attempt_at: null, error: JSON.stringify(failure.error) }, { kind: 'governance_outcome_refused', detail: { report_id: row.report_id, error: failure.error } });
    if (done) this.deps.metrics.governanceOutcome('delivery', 'refused');
  }

  /** The outcome's result under its lease, and the buy's event with it, in one commit. */
  private async finish(row: OutcomeRow, lease: Lease, patch: OutcomePatch, event?: { kind: string; detail: unknown }): Promise<boolean> {
    const now = this.deps.clock.now();
    const written = await inWriteTransaction(this.deps.store.db, async (trx) => {
      if (!(await this.deps.store.deliveryOutcomes.finishIn(trx, row.id, lease, patch))) return { held: false as const };
      if (!event) return { held: true as const };
      const change = await this.deps.store.mediaBuys.mutateIn(trx, row.buy_id, null, () => ({ events: [{ source: 'call', ...event, at: now }], value: null }), now);
      return { held: true as const, change };
    });
    if (written.held && written.change?.outcome === 'applied') this.deps.bus.publishBuy(buyChange(written.change));
    if (!written.held) this.deps.log.info({ outcome_id: row.id }, 'delivery outcome: lease lost before writing; discarded');
    return written.held;
  }
}
