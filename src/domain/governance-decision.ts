/**
 * Reading a governance agent's answer to an intent `check_governance`
 * (AdCP spec, governance). Pure: the engine acts on what this says.
 *
 * The decision is `verdict` (3.1+), else `status` when that is a decision word
 * (3.0). A `submitted` / `working` reply with a `task_id` is a human review to
 * be polled. Everything else is *no decision*, and so is an approval that does
 * not carry both a `governance_context` and an `expires_at` still in the
 * future: an approval we cannot prove unexpired authorizes nothing.
 */

export const GOVERNANCE_VERDICTS = ['approved', 'denied', 'conditions'] as const;
export type GovernanceVerdict = (typeof GOVERNANCE_VERDICTS)[number];

/** A condition as the agent states it: `field` is payload-relative (3.0) or rooted at the request (3.2, `payload.` prefix). */
export interface GovernanceCondition {
  field: string;
  required_value?: unknown;
  reason: string;
}

export type CheckReading =
  | { kind: 'approved'; checkId?: string; expiresAt: number; token: string; explanation?: string }
  | { kind: 'denied'; checkId?: string; findings: unknown[]; explanation?: string }
  | { kind: 'conditions'; checkId?: string; conditions: GovernanceCondition[]; token?: string; expiresAt?: number; explanation?: string; findings: unknown[] }
  | { kind: 'review'; taskId: string; checkId?: string; message?: string }
  | { kind: 'no_decision'; reason: string; checkId?: string };

const isVerdict = (v: unknown): v is GovernanceVerdict => typeof v === 'string' && (GOVERNANCE_VERDICTS as readonly string[]).includes(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** The decision word of a reply: `verdict`, else a decision-valued `status`. */
export function verdictOf(data: Record<string, unknown>): GovernanceVerdict | undefined {
  if (isVerdict(data.verdict)) return data.verdict;
  if (isVerdict(data.status)) return data.status;
  return undefined;
}

/**
 * What a check reply (or the result of a finished review task) decides.
 * `taskStatus` is the reply's task status as the AdCP client classified it, and
 * `taskId` its task handle, so an async review is recognised whichever way the
 * agent spells it.
 */
export function readCheckReply(data: Record<string, unknown>, now: number, taskStatus?: string, taskId?: string): CheckReading {
  const checkId = str(data.check_id);
  const explanation = str(data.explanation);
  const verdict = verdictOf(data);
  if (verdict === undefined) {
    const asyncStatus = data.status === 'submitted' || data.status === 'working' || taskStatus === 'submitted' || taskStatus === 'working';
    const handle = str(data.task_id) ?? taskId;
    if (asyncStatus && handle) return { kind: 'review', taskId: handle, ...(checkId ? { checkId } : {}), ...(str(data.message) ? { message: str(data.message) } : {}) };
    return { kind: 'no_decision', reason: `the reply carries no decision (status ${JSON.stringify(data.status ?? null)}, no verdict)`, ...(checkId ? { checkId } : {}) };
  }
  const expiresAt = typeof data.expires_at === 'string' ? Date.parse(data.expires_at) : NaN;
  switch (verdict) {
    case 'approved': {
      const token = str(data.governance_context);
      if (!token) return { kind: 'no_decision', reason: 'an approval without a governance_context authorizes nothing', ...(checkId ? { checkId } : {}) };
      if (Number.isNaN(expiresAt)) return { kind: 'no_decision', reason: 'an approval without expires_at cannot be shown to be unexpired', ...(checkId ? { checkId } : {}) };
      if (expiresAt <= now) return { kind: 'no_decision', reason: `the approval had already expired (${new Date(expiresAt).toISOString()}) when it arrived`, ...(checkId ? { checkId } : {}) };
      return { kind: 'approved', expiresAt, token, ...(checkId ? { checkId } : {}), ...(explanation ? { explanation } : {}) };
    }
    case 'denied':
      return { kind: 'denied', findings: Array.isArray(data.findings) ? data.findings : [], ...(checkId ? { checkId } : {}), ...(explanation ? { explanation } : {}) };
    case 'conditions': {
      const conditions = readConditions(data.conditions);
      if (!conditions) return { kind: 'no_decision', reason: 'a conditions reply without readable conditions[] cannot be met', ...(checkId ? { checkId } : {}) };
      const token = str(data.governance_context);
      return {
        kind: 'conditions',
        conditions,
        findings: Array.isArray(data.findings) ? data.findings : [],
        ...(token ? { token } : {}),
        ...(Number.isNaN(expiresAt) ? {} : { expiresAt }),
        ...(checkId ? { checkId } : {}),
        ...(explanation ? { explanation } : {}),
      };
    }
  }
}

function readConditions(raw: unknown): GovernanceCondition[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  const out: GovernanceCondition[] = [];
  for (const c of raw) {
    if (!c || typeof c !== 'object' || Array.isArray(c)) return undefined;
    const { field, reason } = c as Record<string, unknown>;
    if (typeof field !== 'string' || field.length === 0) return undefined;
    out.push({
      field,
      reason: typeof reason === 'string' ? reason : '',
      ...('required_value' in c ? { required_value: (c as Record<string, unknown>).required_value } : {}),
    });
  }
  return out;
}

/**
 * Whether an approval may still be sent: its lifetime not yet run out, with a
 * margin for the call itself (a quarter of its lifetime, at most 5 s), so a
 * token is never attached that the seller would see as expired.
 */
export function approvalUsable(approval: { expires_at: number; received_at: number } | undefined, now: number): boolean {
  if (!approval) return false;
  const lifetime = Math.max(0, approval.expires_at - approval.received_at);
  const margin = Math.min(5_000, lifetime / 4);
  return approval.expires_at - now > margin;
}
