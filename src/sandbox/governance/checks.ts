/**
 * Intent `check_governance`: validate, find the plan and the seller the token
 * would be for, follow the request's lineage, decide (rules.ts), and sign.
 *
 * - approved    → `expires_at` and a signed intent `governance_context` bound
 *                 to the seller (`aud`), the tool, the payload hash and the
 *                 approved spend.
 * - conditions  → `conditions[]`, `expires_at` and a *continuity* token (its
 *                 `aud` is this agent, so no seller accepts it) to pass back
 *                 as `governance_context` on the re-check. That token is how
 *                 the agent knows a re-check belongs to the same lineage; the
 *                 third re-check in a lineage that still needs conditions is
 *                 denied, and so is every later one.
 * - denied      → `findings[]`.
 * - the plan says `human_review_required: true` → `submitted` + `task_id`;
 *   the review ends after `reviewDelayMs` or through `sandbox_review`, and
 *   the decision (made by the same rules at that moment) is the task's result.
 */
import { createHash, randomUUID } from 'node:crypto';
import { canonicalize } from '@adcp/sdk';
import { governedPayloadHash, planHash } from './hashes.js';
import type { PlanBook, StoredPlan } from './plans.js';
import { CATEGORIES_EVALUATED, evaluateIntent, type Condition, type Finding } from './rules.js';
import { assertValidReply, requestIssues, schemaError } from './schema-check.js';
import type { GovernanceSigner } from './signing.js';
import type { CheckStat, GovernanceStatsRecorder } from './stats.js';
import { TaskRegistry } from '../tasks.js';
import { errorResult, isPlainObject, ok, type ToolResult } from '../wire.js';

export const MAX_FAILED_RECHECKS = 3;

export interface CheckTimings {
  /** Lifetime of an approval (and of a conditions reply), seconds; at most 900. */
  approvalTtlSeconds: number;
  /** A human review ends by itself after this long; null: only sandbox_review ends it. */
  reviewDelayMs: number | null;
  now(): number;
}

export type Decision = 'approved' | 'denied' | 'conditions';

export interface CheckRecord {
  check_id: string;
  plan_id: string;
  caller: string;
  tool: string;
  audience: string;
  payload: Record<string, unknown>;
  lineage_id: string;
  recheck: boolean;
  status: Decision | 'submitted';
  /** The decision reply, once decided. */
  body?: Record<string, unknown>;
  governance_context?: string;
  commitment?: { amount: number; currency: string };
  findings: Finding[];
  explanation?: string;
  plan_hash: string;
  human_review: boolean;
  escalation?: { reason: string; resolution?: string; resolved_at?: string };
  at: string;
  /** The outcome that settled this check's spend, if any. */
  settled_by?: string;
}

interface Lineage {
  failures: number;
  closed: boolean;
}

const REVIEW_REASON = 'the plan requires human review of every action (human_review_required)';

export class CheckDesk {
  readonly records = new Map<string, CheckRecord>();
  readonly reviews = new TaskRegistry('governance');
  private readonly lineages = new Map<string, Lineage>();

  constructor(
    private readonly plans: PlanBook,
    private readonly signer: GovernanceSigner,
    private readonly agentUrl: string,
    private readonly timings: CheckTimings,
    private readonly stats: GovernanceStatsRecorder,
  ) {}

  async check(args: Record<string, unknown>): Promise<ToolResult> {
    // Checked whole against the 3.0 schema, as an SDK-built agent checks it: its request is
    // closed (additionalProperties: false), so 3.2's `target_agent` at the root is refused.
    const issues = requestIssues('check_governance', args);
    if (issues.length > 0) return schemaError('check_governance', issues);
    const planId = String(args.plan_id);
    const plan = this.plans.get(planId);
    if (!plan) return errorResult('PLAN_NOT_FOUND', `no plan ${planId}; sync it with sync_plans first`, { field: 'plan_id' });
    if (args.planned_delivery !== undefined || typeof args.tool !== 'string' || !isPlainObject(args.payload)) {
      return errorResult('INVALID_REQUEST', 'the sandbox governance agent answers intent checks only: send tool and payload (the exact seller arguments)', {
        field: 'tool',
      });
    }
    const audience = audienceOf(targetAgentOf(args), plan);
    if (!audience) {
      return errorResult(
        'INVALID_REQUEST',
        `which seller is this for? Send ext.${TARGET_AGENT_EXT}.target_agent (the seller's agent URL), or list exactly one seller in the plan's approved_sellers`,
        { field: `ext.${TARGET_AGENT_EXT}.target_agent` },
      );
    }
    let lineageId: string = randomUUID();
    let recheck = false;
    if (typeof args.governance_context === 'string') {
      const prior = await this.priorCheck(args.governance_context, planId);
      if (!prior) {
        return errorResult('INVALID_REQUEST', 'governance_context is not one this agent issued for this plan', { field: 'governance_context' });
      }
      lineageId = prior.lineage_id;
      recheck = true;
    }
    const record: CheckRecord = {
      check_id: `chk_${randomUUID()}`,
      plan_id: planId,
      caller: String(args.caller),
      tool: args.tool,
      audience,
      payload: structuredClone(args.payload),
      lineage_id: lineageId,
      recheck,
      status: 'submitted',
      findings: [],
      plan_hash: planHash(plan),
      human_review: plan.human_review_required === true,
      at: new Date(this.timings.now()).toISOString(),
    };
    this.records.set(record.check_id, record);
    if (record.human_review) return ok(this.startReview(record, args.context));
    const body = await this.decide(record, plan);
    this.stats.check({ ...statOf(record), status: record.status });
    return ok(body);
  }

  /** Ends a human review: `denied` by the reviewer, else the rules decide as of now. */
  async resolveReview(taskId: string, by: 'delay' | 'tool', decision?: 'approved' | 'denied', reason?: string): Promise<ToolResult> {
    const task = this.reviews.get(taskId);
    const checkId = task?.request?.check_id;
    const record = typeof checkId === 'string' ? this.records.get(checkId) : undefined;
    if (!task || !record) return errorResult('REFERENCE_NOT_FOUND', 'no such review task', { field: 'task_id' });
    if (task.status !== 'submitted') {
      return errorResult('INVALID_STATE', `the review already ended (task is ${task.status})`, { field: 'task_id' });
    }
    const plan = this.plans.get(record.plan_id)!;
    const rejection =
      decision === 'denied'
        ? { category_id: 'human_review', severity: 'critical' as const, explanation: reason ?? 'Denied by the human reviewer.' }
        : undefined;
    const body = await this.decide(record, plan, rejection);
    record.escalation = {
      reason: REVIEW_REASON,
      resolution: record.status === 'approved' ? 'approved_by_human' : 'rejected_by_human',
      resolved_at: new Date(this.timings.now()).toISOString(),
    };
    this.reviews.transition(taskId, 'completed', { result: body, message: `Human review ended: ${record.status}.` });
    this.stats.review({ task_id: taskId, check_id: record.check_id, resolved_by: by, decision: record.status, at: record.escalation.resolved_at! });
    return ok({ task_id: taskId, status: 'completed', result: body });
  }

  close(): void {
    this.reviews.close();
  }

  private startReview(record: CheckRecord, context: unknown): Record<string, unknown> {
    const message = `Human review: ${REVIEW_REASON}. Poll tasks/get (or get_task_status) with this task_id for the decision.`;
    const task = this.reviews.create({
      task_type: 'check_governance',
      status: 'submitted',
      message,
      request: { check_id: record.check_id },
      ...(context !== undefined && { context }),
    });
    record.escalation = { reason: REVIEW_REASON };
    if (this.timings.reviewDelayMs !== null) {
      this.reviews.schedule(this.timings.reviewDelayMs, () => {
        // Nobody awaits a timer: a failure to decide ends the task failed instead of going unheard.
        this.resolveReview(task.task_id, 'delay').catch((err: unknown) => {
          this.reviews.transition(task.task_id, 'failed', {
            error: { code: 'SERVICE_UNAVAILABLE', message: err instanceof Error ? err.message : String(err) },
          });
        });
      });
    }
    this.stats.check({ ...statOf(record), status: 'submitted' });
    return { status: 'submitted', task_id: task.task_id, message, plan_id: record.plan_id, check_id: record.check_id };
  }

  /** The check's decision reply; also settles the lineage's failure count. */
  private async decide(record: CheckRecord, plan: StoredPlan, reviewerDenial?: Finding): Promise<Record<string, unknown>> {
    const lineage = this.lineages.get(record.lineage_id) ?? { failures: 0, closed: false };
    this.lineages.set(record.lineage_id, lineage);
    const now = this.timings.now();
    let evaluation = evaluateIntent(plan, { payload: record.payload, audience: record.audience, now });
    if (reviewerDenial) evaluation = { decision: 'denied', findings: [reviewerDenial] };
    let conditions: Condition[] = [];
    if (lineage.closed) {
      evaluation = { decision: 'denied', findings: [negotiationLimit()] };
    } else if (evaluation.decision === 'conditions') {
      if (record.recheck) lineage.failures++;
      if (lineage.failures >= MAX_FAILED_RECHECKS) {
        lineage.closed = true;
        evaluation = { decision: 'denied', findings: [...evaluation.findings, negotiationLimit()] };
      } else conditions = evaluation.conditions;
    }
    record.status = evaluation.decision;
    record.findings = evaluation.decision === 'approved' ? [] : evaluation.findings;
    record.plan_hash = planHash(plan);
    record.explanation = explain(evaluation.decision, record, conditions, record.findings);
    const body: Record<string, unknown> = {
      check_id: record.check_id,
      status: record.status,
      // 3.1+ carries the decision in `verdict`; the 3.0 reply allows extra fields.
      verdict: record.status,
      plan_id: record.plan_id,
      explanation: record.explanation,
      categories_evaluated: CATEGORIES_EVALUATED,
      mode: 'enforce',
    };
    if (record.findings.length > 0) body.findings = record.findings;
    if (evaluation.decision !== 'denied') {
      const iat = Math.floor(now / 1000);
      const exp = iat + this.timings.approvalTtlSeconds;
      body.expires_at = new Date(exp * 1000).toISOString();
      const claims: Record<string, unknown> = {
        iss: this.agentUrl,
        sub: record.plan_id,
        aud: evaluation.decision === 'approved' ? record.audience : this.agentUrl,
        iat,
        exp,
        jti: randomUUID(),
        phase: 'intent',
        caller: record.caller,
        check_id: record.check_id,
        plan_hash: record.plan_hash,
        policy_decision_hash: decisionHash(body),
      };
      if (evaluation.decision === 'approved') {
        record.commitment = evaluation.commitment;
        claims.authorized_task = record.tool;
        claims.authorized_payload_hash = governedPayloadHash(record.payload);
        claims.authorized_commitment = evaluation.commitment;
      } else body.conditions = conditions;
      record.governance_context = await this.signer.sign(claims);
      body.governance_context = record.governance_context;
    }
    assertValidReply('check_governance', body);
    record.body = body;
    return body;
  }

  /** The check an earlier token of ours came from, if it was for this plan. */
  private async priorCheck(token: string, planId: string): Promise<CheckRecord | undefined> {
    const claims = await this.signer.readOwn(token);
    const prior = typeof claims?.check_id === 'string' ? this.records.get(claims.check_id) : undefined;
    return prior && prior.plan_id === planId && claims?.sub === planId ? prior : undefined;
  }
}

/**
 * Where a 3.0 request names the seller the token is for. 3.0 has no field for it (3.2
 * adds `target_agent`); its `ext` is the open, vendor-namespaced place for "features
 * being proposed for standardization", so the orchestrator sends 3.2's field there.
 */
export const TARGET_AGENT_EXT = 'adcp_orchestrator';

function targetAgentOf(args: Record<string, unknown>): unknown {
  const ext = args.ext;
  const ours = isPlainObject(ext) ? ext[TARGET_AGENT_EXT] : undefined;
  return isPlainObject(ours) ? ours.target_agent : undefined;
}

/** The token's audience: the named seller, else the plan's only approved seller. */
function audienceOf(targetAgent: unknown, plan: StoredPlan): string | undefined {
  if (typeof targetAgent === 'string' && /^https?:\/\/\S+$/.test(targetAgent)) return targetAgent;
  if (targetAgent === undefined && Array.isArray(plan.approved_sellers) && plan.approved_sellers.length === 1) {
    return plan.approved_sellers[0];
  }
  return undefined;
}

function negotiationLimit(): Finding {
  return {
    category_id: 'negotiation_limit',
    severity: 'critical',
    explanation: `${MAX_FAILED_RECHECKS} re-checks of this request still did not meet the conditions; start over with a new request.`,
  };
}

function explain(decision: Decision, record: CheckRecord, conditions: Condition[], findings: Finding[]): string {
  if (decision === 'approved') return `Approved: ${record.tool} is within plan ${record.plan_id}.`;
  if (decision === 'conditions') return `Approved on conditions: ${conditions.map((c) => c.reason).join(' ')}`;
  return `Denied: ${findings.map((f) => f.explanation).join(' ')}`;
}

/** Hex SHA-256 of the canonical decision (the spec's policy_decision_hash: an integrity anchor for the audit log). */
function decisionHash(body: Record<string, unknown>): string {
  const { check_id, status, categories_evaluated, findings } = body;
  return createHash('sha256').update(canonicalize({ check_id, status, categories_evaluated, findings: findings ?? [] })).digest('hex');
}

function statOf(r: CheckRecord): Omit<CheckStat, 'status'> {
  return {
    check_id: r.check_id,
    plan_id: r.plan_id,
    caller: r.caller,
    tool: r.tool,
    audience: r.audience,
    lineage_id: r.lineage_id,
    recheck: r.recheck,
    payload: r.payload,
    at: r.at,
  };
}
