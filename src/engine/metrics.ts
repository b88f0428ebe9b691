/**
 * Prometheus metrics of docs/OPERATIONS.md, Metrics to alert on (prefix `adcp_orch_`). Counters count what
 * this process did; the pending gauge is read from the database at scrape time,
 * so it is right whichever instance is scraped.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { REPORT_STEP } from '../domain/governed-flow.js';
import type { Store } from '../store/index.js';
import { databaseUnavailable } from '../store/db-errors.js';
import type { OutageCounter, OutagePlace } from './database-outage.js';

/**
 * A gauge read from the database at scrape time. While the database is away it has no
 * value (its series is left out) and /metrics still answers, with the counters that say
 * so (`database_unavailable_total`); any other failure fails the scrape as before.
 */
function fromDatabase(gauge: Gauge, read: () => Promise<void>): Promise<void> {
  return read().catch((err) => {
    if (!databaseUnavailable(err)) throw err;
    gauge.reset();
  });
}

export class Metrics implements OutageCounter {
  readonly registry = new Registry();
  private readonly transitions: Counter;
  private readonly rejected: Counter;
  private readonly timedOut: Counter;
  private readonly agentCalls: Counter;
  private readonly agentErrors: Counter;
  private readonly webhooks: Counter;
  private readonly polls: Counter;
  private readonly conflicts: Counter;
  private readonly inputReminders: Counter;
  private readonly inputExpiries: Counter;
  private readonly databaseUnavailableCount: Counter;
  readonly approvalDuration: Histogram;
  readonly asyncDuration: Histogram;
  readonly circuitState: Gauge;
  private readonly governanceChecks: Counter;
  private readonly governanceOutcomes: Counter;
  private readonly mcpToolCalls: Counter;
  /** From the start of a wait for a governance decision (a check, its retries, a human review) until the decision. */
  readonly governanceWait: Histogram;
  private readonly deliveryReports: Counter;
  private readonly reportsMissing: Counter;
  private readonly pacingAlerts: Counter;
  private readonly creativeReviews: Counter;

  constructor(store?: Store, opts: { defaultMetrics?: boolean; instanceDeadAfterMs?: number } = {}) {
    const registers = [this.registry];
    const p = 'adcp_orch_';
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: p });
    this.transitions = new Counter({ name: `${p}operation_transitions_total`, help: 'Operation status changes', labelNames: ['type', 'from', 'to', 'source'], registers });
    this.rejected = new Counter({ name: `${p}operations_rejected_total`, help: 'Operations that ended rejected', labelNames: ['type'], registers });
    this.timedOut = new Counter({ name: `${p}operations_timed_out_total`, help: 'Operations whose local deadline passed', labelNames: ['type'], registers });
    this.agentCalls = new Counter({ name: `${p}agent_calls_total`, help: 'Calls to agents', labelNames: ['agent', 'task', 'outcome'], registers });
    this.agentErrors = new Counter({ name: `${p}agent_errors_total`, help: 'Errors from agents by AdCP code', labelNames: ['agent', 'code'], registers });
    this.webhooks = new Counter({ name: `${p}webhooks_received_total`, help: 'Inbound webhooks by outcome', labelNames: ['outcome'], registers });
    this.polls = new Counter({ name: `${p}polls_total`, help: 'Task polls', labelNames: ['agent', 'outcome'], registers });
    this.conflicts = new Counter({ name: `${p}terminal_conflicts_total`, help: 'A different terminal status observed after the first', labelNames: ['type'], registers });
    this.inputReminders = new Counter({ name: `${p}input_reminders_total`, help: 'Reminders of requests still waiting for a person', labelNames: ['kind'], registers });
    this.inputExpiries = new Counter({ name: `${p}input_expired_total`, help: 'Requests that expired unanswered, by what the expiry did', labelNames: ['kind', 'then'], registers });
    this.databaseUnavailableCount = new Counter({
      name: `${p}database_unavailable_total`,
      help: 'Database calls that failed because the database was unavailable, by where (api, dashboard, webhook, scheduler, …)',
      labelNames: ['where'],
      registers,
    });
    const buckets = [1, 5, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 72 * 3600];
    this.approvalDuration = new Histogram({ name: `${p}approval_duration_seconds`, help: 'input-required until answered', labelNames: ['type'], buckets, registers });
    this.asyncDuration = new Histogram({ name: `${p}async_duration_seconds`, help: 'submitted until terminal', labelNames: ['type'], buckets, registers });
    this.governanceChecks = new Counter({
      name: `${p}governance_checks_total`,
      help: 'Intent check_governance answers by decision (approved, denied, conditions, review, no_decision, unavailable, error)',
      labelNames: ['decision'],
      registers,
    });
    this.governanceOutcomes = new Counter({
      name: `${p}governance_outcomes_reported_total`,
      help: 'report_plan_outcome calls the governance agent took, by outcome and reply status (accepted, findings, refused)',
      labelNames: ['outcome', 'status'],
      registers,
    });
    this.governanceWait = new Histogram({ name: `${p}governance_wait_seconds`, help: 'Time spent waiting for a governance decision before a spend', buckets, registers });
    this.mcpToolCalls = new Counter({
      name: `${p}mcp_tool_calls_total`,
      help: 'MCP tool calls by tool and outcome (ok, task, invalid, forbidden, error, database_unavailable, internal_error; tool "unknown" for names we do not serve)',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.deliveryReports = new Counter({
      name: `${p}delivery_reports_total`,
      help: 'Delivery reports of live media buys by source (webhook, poll) and outcome (applied, superseded, duplicate, unmatched, refused)',
      labelNames: ['source', 'outcome'],
      registers,
    });
    this.reportsMissing = new Counter({ name: `${p}delivery_reports_missing_total`, help: 'Delivery reports found missing (a silence past the grace, a skipped sequence number)', registers });
    this.pacingAlerts = new Counter({ name: `${p}pacing_alerts_total`, help: 'Live media buys crossing into under- or over-pacing', labelNames: ['state'], registers });
    // The seed's approval and rejection rates, for creatives: how their reviews at sellers end (or stall).
    this.creativeReviews = new Counter({ name: `${p}creative_reviews_total`, help: 'Creative reviews at sellers by outcome (approved, rejected, stalled)', labelNames: ['outcome'], registers });
    this.circuitState = new Gauge({ name: `${p}circuit_state`, help: 'Circuit breaker per agent: 0 closed, 1 half-open, 2 open', labelNames: ['agent'], registers });
    if (store) {
      new Gauge({
        name: `${p}operations_pending`,
        help: 'Non-terminal operations by type and status (from the database)',
        labelNames: ['type', 'status'],
        registers,
        async collect() {
          await fromDatabase(this, async () => {
            const rows = await store.db.kysely
              .selectFrom('operations')
              .select(['type', 'status', (eb) => eb.fn.countAll<number>().as('n')])
              .where('status', 'not in', ['completed', 'failed', 'canceled', 'rejected'])
              .groupBy(['type', 'status'])
              .execute();
            this.reset();
            for (const r of rows) this.set({ type: r.type, status: r.status }, Number(r.n));
          });
        },
      });
      new Gauge({
        name: `${p}governance_outcomes_pending`,
        help: 'Seller results whose report_plan_outcome is not yet accepted (from the database)',
        registers,
        async collect() {
          await fromDatabase(this, async () => {
            const row = await store.db.kysely
              .selectFrom('operations')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('next_check_at', 'is not', null)
              .where('check_kind', '=', REPORT_STEP)
              .executeTakeFirst();
            this.set(Number(row?.n ?? 0));
          });
        },
      });
      new Gauge({
        name: `${p}media_buys`,
        help: 'Live media buys by status (from the database)',
        labelNames: ['status'],
        registers,
        async collect() {
          await fromDatabase(this, async () => {
            const rows = await store.mediaBuys.countByStatus();
            this.reset();
            for (const r of rows) this.set({ status: r.status }, r.n);
          });
        },
      });
      const deadAfterMs = opts.instanceDeadAfterMs ?? 10_000;
      new Gauge({
        name: `${p}instances_live`,
        help: 'Instances serving this database whose heartbeat is within ADCP_ORCH_INSTANCE_DEAD_AFTER_MS (from the database)',
        registers,
        async collect() {
          await fromDatabase(this, async () => this.set(await store.instances.countLive(deadAfterMs)));
        },
      });
    }
  }

  transition(type: string, from: string, to: string, source: string): void {
    this.transitions.inc({ type, from, to, source });
    if (to === 'rejected') this.rejected.inc({ type });
  }
  timedOutOne(type: string): void {
    this.timedOut.inc({ type });
  }
  agentCall(agent: string, task: string, outcome: string): void {
    this.agentCalls.inc({ agent, task, outcome });
  }
  agentError(agent: string, code: string): void {
    this.agentErrors.inc({ agent, code });
  }
  webhook(outcome: string): void {
    this.webhooks.inc({ outcome });
  }
  poll(agent: string, outcome: string): void {
    this.polls.inc({ agent, outcome });
  }
  conflict(type: string): void {
    this.conflicts.inc({ type });
  }
  governanceCheck(decision: string): void {
    this.governanceChecks.inc({ decision });
  }
  governanceOutcome(outcome: string, status: string): void {
    this.governanceOutcomes.inc({ outcome, status });
  }
  deliveryReport(source: string, outcome: string): void {
    this.deliveryReports.inc({ source, outcome });
  }
  /** Counts what the buys' notifications tell (made here): a missing report, a pacing alert, a creative's review. */
  mediaBuyNotified(notifications: ReadonlyArray<{ type: string }>): void {
    for (const n of notifications) {
      if (n.type === 'media_buy.report_missing') this.reportsMissing.inc();
      else if (n.type === 'media_buy.underpacing') this.pacingAlerts.inc({ state: 'under' });
      else if (n.type === 'media_buy.overpacing') this.pacingAlerts.inc({ state: 'over' });
      else if (n.type.startsWith('creative.')) this.creativeReviews.inc({ outcome: n.type.slice('creative.'.length) });
    }
  }
  inputReminder(kind: string): void {
    this.inputReminders.inc({ kind });
  }
  mcpToolCall(tool: string, outcome: string): void {
    this.mcpToolCalls.inc({ tool, outcome });
  }
  inputExpired(kind: string, then: string): void {
    this.inputExpiries.inc({ kind, then });
  }
  databaseUnavailable(where: OutagePlace): void {
    this.databaseUnavailableCount.inc({ where });
  }
}
