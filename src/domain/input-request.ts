/**
 * What a person is asked when an operation waits for one (docs/ARCHITECTURE.md, People in the loop), and
 * the rules for an answer. Pure: the engine stores and acts on what this decides.
 *
 * Four kinds of request, one way to answer (`approve` | `reject` | `respond`):
 * - `seller_input`: the seller answered `input-required` or `auth-required`;
 * - `spend_approval`: the tenant's own rule holds a buy before anything is sent;
 * - `governance_conditions`: the governance agent answered `conditions` (shaped
 *   here so that the inbox needs no change when the governance cycle fills it);
 * - `creative_rejected`: the seller rejected creatives a `sync_creatives` sent
 *   (src/domain/creative-request.ts): `respond` sends corrected ones, `reject`
 *   dismisses the rejection.
 */

import { canonical, sellerStatusOf, withQuestionId } from './input-question.js';

export const DECISIONS = ['approve', 'reject', 'respond'] as const;
export type Decision = (typeof DECISIONS)[number];

export type InputRequestKind = 'seller_input' | 'spend_approval' | 'governance_conditions' | 'creative_rejected';

/** `creative_rejected` only: a creative the seller rejected, and why. */
export interface RejectedCreative {
  creative_id: string;
  name: string | null;
  rejection_reason: string;
  package_ids: string[];
}

export interface ConditionField {
  field: string;
  required_value?: unknown;
  reason: string;
}

export interface InputRequest {
  /**
   * Names this question (src/domain/input-question.ts): an answer may say which question it
   * answers (`question_id`), and one to a question since replaced is refused. Requests stored
   * before ids existed have none: their `requested_at` names them.
   */
  id?: string;
  kind: InputRequestKind;
  message: string;
  /** Machine-readable why: the seller's own reason code (else its status word), or the tenant rule that held the buy. */
  reason?: string;
  /** `seller_input` only: the seller's task status that asked. */
  seller_status?: 'input-required' | 'auth-required';
  allowed: Decision[];
  fields?: ConditionField[];
  /** ISO 8601. */
  requested_at: string;
  /** ISO 8601: when the request expires, from the tenant's `input_expiry` setting (src/domain/input-timers.ts). */
  expires_at?: string;
  /** What its expiry does: `reject` ends the operation as a reject would, `stall` marks it stalled and it still waits. */
  on_expiry?: 'reject' | 'stall';
  /** `creative_rejected` only: the first rejected creative and the seller's reason (all of them in `creatives`). */
  creative_id?: string;
  rejection_reason?: string;
  creatives?: RejectedCreative[];
  /** `creative_rejected` only: the live buy they were sent to (our id and the seller's). */
  media_buy?: { id: string; media_buy_id: string };
}

/** A person's answer as received (before it is acted on). */
export interface Answer {
  decision: Decision;
  message?: string;
  params?: Record<string, unknown>;
  /** The question the person answers (its `id`); without it, the answer is to the question current when it is taken. */
  question_id?: string;
}

/** An answer as recorded on the operation: who, what, when. */
export interface RecordedAnswer extends Answer {
  actor: string;
  /** ISO 8601. */
  at: string;
  kind: InputRequestKind;
  /** The operation that carries the corrected request on, when the answer created one. */
  child_id?: string;
  /** ISO 8601: set when no person answered: the request expired and the tenant's rule rejected it (actor `timer`). */
  expired_at?: string;
}

/** Request fields that are ours to set: a person's `params` may not override them. */
export const RESERVED_PARAMS = ['idempotency_key', 'context', 'push_notification_config', 'governance_context'] as const;

const iso = (ms: number) => new Date(ms).toISOString();

/** What the seller said when it asked: its message and its own reason code (AdCP `reason`, e.g. `APPROVAL_REQUIRED`). */
export interface SellerSaid {
  message?: string;
  reason?: string;
}

/**
 * The seller asked for something. Only a verified transport continuation (A2A
 * taskId + contextId of the very reply that asked, AdCP spec, task status) lets us answer
 * on the same task, so `approve` is offered only with one; without it a corrected
 * request goes out as a new operation (`respond`). `auth-required` is answered by
 * updating the agent's credentials, which retries it; a person may still end it.
 */
export function sellerInputRequest(
  status: 'input-required' | 'auth-required',
  said: SellerSaid,
  hasContinuation: boolean,
  now: number,
): InputRequest {
  if (status === 'auth-required') {
    return withQuestionId({
      kind: 'seller_input',
      message: said.message ?? 'The seller needs fresh credentials for this request.',
      reason: said.reason ?? 'auth-required',
      seller_status: status,
      allowed: ['reject'],
      requested_at: iso(now),
    });
  }
  return withQuestionId({
    kind: 'seller_input',
    message: said.message ?? 'The seller needs more input for this request.',
    reason: said.reason ?? 'input-required',
    seller_status: status,
    allowed: hasContinuation ? ['approve', 'reject', 'respond'] : ['reject', 'respond'],
    requested_at: iso(now),
  });
}

export function spendApprovalRequest(reason: SpendHoldReason, now: number): InputRequest {
  return withQuestionId({
    kind: 'spend_approval',
    message: reason.message,
    reason: reason.rule,
    allowed: ['approve', 'reject'],
    requested_at: iso(now),
  });
}

export function governanceConditionsRequest(message: string, fields: ConditionField[], now: number): InputRequest {
  return withQuestionId({ kind: 'governance_conditions', message, allowed: ['approve', 'reject'], fields, requested_at: iso(now) });
}

/** Why an answer cannot be taken: `status` is the HTTP status the API answers with. */
export interface AnswerProblem {
  status: 400 | 409;
  code: string;
  message: string;
}

/**
 * Checks an answer against the request it answers. Bad input (400) is found
 * before anything else; a decision the request does not allow is 409.
 */
export function checkAnswer(request: InputRequest, answer: Answer): AnswerProblem | null {
  const { decision, params } = answer;
  const message = answer.message?.trim();
  if (params !== undefined) {
    const reserved = RESERVED_PARAMS.filter((k) => k in params);
    if (reserved.length > 0) {
      return { status: 400, code: 'reserved_params', message: `params may not set ${reserved.join(', ')}: the orchestrator sets them` };
    }
  }
  if (decision === 'respond' && (params === undefined || Object.keys(params).length === 0)) {
    return { status: 400, code: 'params_required', message: 'respond needs params: the corrections to the request' };
  }
  if (decision === 'reject' && params !== undefined) {
    return { status: 400, code: 'params_not_allowed', message: 'reject takes no params' };
  }
  // Approving a held buy or a seller's question sends what was asked as it is; corrections are `respond`.
  if (decision === 'approve' && params !== undefined && request.kind !== 'governance_conditions') {
    return { status: 400, code: 'params_not_allowed', message: 'approve sends the request as it is; send corrections with respond' };
  }
  // Turning down spend (or a governance condition) is a decision others must be able to understand later.
  // Dismissing a creative's rejection spends nothing and keeps it rejected: a message is welcome, not needed.
  if (decision === 'reject' && request.kind !== 'seller_input' && request.kind !== 'creative_rejected' && !message) {
    return { status: 400, code: 'message_required', message: `rejecting a ${request.kind.replace('_', ' ')} needs a message saying why` };
  }
  if (!request.allowed.includes(decision)) {
    const sellerStatus = request.kind === 'seller_input' ? sellerStatusOf(request) : undefined;
    if (sellerStatus === 'input-required' && decision === 'approve') {
      return {
        status: 409,
        code: 'no_continuation',
        message: "the seller's transport offers no continuation for this task (MCP, or no open A2A task): answer with respond and corrected params, or reject",
      };
    }
    const hint = sellerStatus === 'auth-required' ? '; update the agent\'s credentials (PATCH /v1/agents/:id) to retry it' : '';
    return { status: 409, code: 'decision_not_allowed', message: `${decision} is not allowed here (allowed: ${request.allowed.join(', ')})${hint}` };
  }
  return null;
}

/** The same answer again (a retry by the same person): taken as already done, not as a second answer. */
export function isSameAnswer(recorded: RecordedAnswer, answer: Answer, actor: string): boolean {
  // An expiry is nobody's answer, whatever a key happens to be called.
  if (recorded.expired_at !== undefined) return false;
  return (
    recorded.actor === actor &&
    recorded.decision === answer.decision &&
    (recorded.message ?? '') === (answer.message ?? '') &&
    canonical(recorded.params) === canonical(answer.params)
  );
}

/**
 * The request a person's `params` make: the original with the corrections laid
 * over it, one level deep for objects (so `{brand: {domain}}` keeps the rest of
 * `brand`), arrays and scalars replaced whole. Our own fields are dropped: the
 * caller sets them again.
 */
export function mergeParams(original: Record<string, unknown>, params: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...original };
  for (const [key, value] of Object.entries(params)) {
    const before = merged[key];
    merged[key] = isPlainObject(before) && isPlainObject(value) ? { ...before, ...value } : value;
  }
  return merged;
}

// ─── spend approval ─────────────────────────────────────────────────────

export interface ApprovalThreshold {
  amount: number;
  currency: string;
}

export interface SpendHoldReason {
  rule: 'approval_required' | 'approval_over';
  message: string;
}

/** What a create_media_buy would spend: `total_budget`, else the sum of `packages[].budget`. */
export function spendOf(request: Record<string, unknown>): { amount: number; currency?: string; readable: boolean } {
  const total = request.total_budget;
  if (isPlainObject(total)) {
    const amount = total.amount;
    const currency = typeof total.currency === 'string' ? total.currency.toUpperCase() : undefined;
    return typeof amount === 'number' && Number.isFinite(amount) ? { amount, currency, readable: true } : { amount: 0, currency, readable: false };
  }
  const packages = Array.isArray(request.packages) ? request.packages : [];
  let amount = 0;
  let readable = true;
  for (const p of packages) {
    const budget = isPlainObject(p) ? p.budget : undefined;
    if (budget === undefined) continue;
    if (typeof budget === 'number' && Number.isFinite(budget)) amount += budget;
    else readable = false;
  }
  // 3.0 package budgets are in the buy's currency, which the request does not state
  // (it follows the pricing option): they are read in the tenant's threshold currency.
  return { amount, readable };
}

/**
 * Whether a buy must wait for a person before it is sent. Fails closed: a spend
 * that cannot be read, or is stated in another currency than the threshold, is
 * held rather than let through unchecked.
 */
export function spendHold(
  request: Record<string, unknown>,
  approval: 'required' | undefined,
  threshold: ApprovalThreshold | undefined,
): SpendHoldReason | null {
  if (approval === 'required') {
    return { rule: 'approval_required', message: 'This buy was created with approval required: a person must approve it before it is sent.' };
  }
  if (!threshold) return null;
  const spend = spendOf(request);
  const limit = `${threshold.amount} ${threshold.currency}`;
  if (!spend.readable) {
    return { rule: 'approval_over', message: `The buy's budget could not be read, so it is held under the approval threshold of ${limit}.` };
  }
  if (spend.currency !== undefined && spend.currency !== threshold.currency.toUpperCase()) {
    return { rule: 'approval_over', message: `The buy spends ${spend.amount} ${spend.currency}, a different currency from the approval threshold of ${limit}.` };
  }
  if (spend.amount > threshold.amount) {
    return { rule: 'approval_over', message: `The buy spends ${spend.amount} ${spend.currency ?? threshold.currency}, over the approval threshold of ${limit}.` };
  }
  return null;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
