/**
 * The guard before an ambiguous mutation goes again under its idempotency_key, and after a
 * seller answers one `IDEMPOTENCY_EXPIRED` (idempotency by capability).
 *
 * A resend is made only while the seller still remembers the key (resend-policy.ts: its
 * declared window from the key's first send, never longer than ours). Otherwise, and when
 * the seller says it forgot the key, the outcome is looked up by natural key
 * (outcome-lookup.ts): nothing there → the resend goes (after an IDEMPOTENCY_EXPIRED answer,
 * whose key the seller will refuse again, the operation fails: nothing was done); the
 * seller's record names it ours → it is bound; anything else → the operation is stalled for
 * a person (`idempotency_unknown`), never sent twice on an assumption.
 */
import type { AdcpClient, AdcpError } from '../adcp/types.js';
import { isTerminal, type OperationStatus } from '../domain/status.js';
import type { OperationRow, Store } from '../store/index.js';
import type { MutationPlan, NewEvent } from '../store/operations-repo.js';
import type { SecretBox } from '../store/secret-box.js';
import { endpointFor } from './agent-endpoints.js';
import { STALLED_SLOWDOWN, type TimingPolicy } from './observation-plan.js';
import { absentText, lookUpOutcome, undecidedText, type LookupVerdict } from './outcome-lookup.js';
import { EXPIRED_WHY, resendDecision, stanceOf } from './resend-policy.js';
import type { RequestSealer } from './sealed-request.js';

type Json = Record<string, unknown>;

/** The reason a person sees on the stalled event, as a code. */
export const IDEMPOTENCY_UNKNOWN = 'idempotency_unknown';

export type GuardAction =
  /** Send again under the key; `note` (when a lookup allowed it) goes on the resend event. */
  | { kind: 'resend'; note?: string }
  /** The seller's record of it (a media buy) stands for its reply: the operation completes with it. */
  | { kind: 'bind'; record: Json; note: string }
  /** The seller forgot the key and shows nothing done: the operation ends failed with its error. */
  | { kind: 'fail'; error: AdcpError }
  /** Not known whether it took effect: a person decides. */
  | { kind: 'stall'; message: string; detail: Json; error?: AdcpError };

export interface ResendGuardDeps {
  store: Store;
  adcp: AdcpClient;
  secrets: SecretBox;
  requests: RequestSealer;
  callTimeoutMs: number;
  replayWindowMs: number;
}

export class ResendGuard {
  constructor(private readonly deps: ResendGuardDeps) {}

  /** Before a resend (a send of an operation already sent once) of a task that takes an idempotency_key. */
  async beforeResend(row: OperationRow, now: number): Promise<GuardAction> {
    const agent = await this.deps.store.agents.get(row.agent_id);
    if (!agent) return { kind: 'resend' }; // the call itself ends it: the agent was removed
    const firstSentAt = await this.firstSentAt(row);
    const decision = resendDecision({ stance: stanceOf(agent), firstSentAt, now, ourWindowMs: this.deps.replayWindowMs, marginMs: this.deps.callTimeoutMs });
    if (decision.kind === 'resend') return decision;
    const verdict = await this.lookUp(row, firstSentAt);
    if (verdict.kind === 'absent') return { kind: 'resend', note: `${decision.why}; looked up: ${absentText(row.type)}: resending is safe` };
    return this.settled(row, decision.why, verdict);
  }

  /** The seller answered a send of this operation IDEMPOTENCY_EXPIRED. */
  async afterExpired(row: OperationRow, error: AdcpError): Promise<Exclude<GuardAction, { kind: 'resend' }>> {
    const verdict = await this.lookUp(row, await this.firstSentAt(row));
    if (verdict.kind === 'absent') {
      // A resend under this key would be refused the same way, and a new key is a new request: the caller's to make.
      const message = `${error.message ?? error.code}; looked up: ${absentText(row.type)}, so it was not carried out: send the request anew`;
      return { kind: 'fail', error: { ...error, message } };
    }
    const action = this.settled(row, EXPIRED_WHY, verdict);
    return action.kind === 'stall' ? { ...action, error } : action;
  }

  /**
   * When the key was first sent: the operation's last step from `requested` to `calling_adcp`
   * (its key is fixed by then: a governed request is re-keyed only while `requested`). An
   * operation with no such event (none should lack one) counts from its creation, which is earlier.
   */
  async firstSentAt(row: OperationRow): Promise<number> {
    const events = await this.deps.store.operations.events(row.id);
    const sends = events.filter((e) => e.from_status === 'requested' && e.to_status === 'calling_adcp');
    return sends.at(-1)?.at ?? row.created_at;
  }

  private async lookUp(row: OperationRow, sentAt: number): Promise<LookupVerdict> {
    const agent = await this.deps.store.agents.get(row.agent_id);
    if (!agent) return { kind: 'unavailable', reason: 'the agent was removed' };
    const { adcp, secrets, requests, callTimeoutMs } = this.deps;
    return lookUpOutcome(adcp, endpointFor(agent, secrets), row.type, requests.open(row.request_body), sentAt, callTimeoutMs);
  }

  private settled(row: OperationRow, why: string, verdict: Exclude<LookupVerdict, { kind: 'absent' }>): Exclude<GuardAction, { kind: 'resend' | 'fail' }> {
    if (verdict.kind === 'found') {
      return { kind: 'bind', record: verdict.record, note: `${why}; looked up: the seller's ${verdict.id} carries this operation's context, so it is this request's outcome` };
    }
    const message = undecidedText(row.type, why, verdict);
    return {
      kind: 'stall',
      message,
      detail: verdict.kind === 'candidates' ? { why, lookup: 'candidates', candidates: verdict.ids } : { why, lookup: 'unavailable', lookup_error: verdict.reason },
    };
  }
}

/**
 * An ambiguous send the guard would not send again and could not settle: `unknown` (the
 * seller may have acted), stalled with reason `idempotency_unknown` and the message, and
 * nothing sent again automatically. A task id already bound is still polled, slowly, and a
 * webhook from the seller still settles it; otherwise only a person moves it on.
 */
export function idempotencyUnknownPlan(
  current: OperationRow,
  stall: Extract<GuardAction, { kind: 'stall' }>,
  now: number,
  timing: TimingPolicy,
  random: () => number,
): MutationPlan<null> {
  const status = isTerminal(current.status as OperationStatus) ? current.status : 'unknown';
  const events: NewEvent[] = [];
  if (status !== current.status) events.push({ source: 'call', kind: 'transition', from: current.status, to: status, detail: { reason: stall.message } });
  // Told even when already stalled for another reason (a spent retry budget): this one needs a person.
  if (!current.stalled || current.stalled_reason !== stall.message) {
    events.push({ source: 'call', kind: 'stalled', from: current.status, to: status, detail: { reason: IDEMPOTENCY_UNKNOWN, message: stall.message, ...stall.detail } });
  }
  const slow = Math.min(timing.pollIntervalMs * STALLED_SLOWDOWN, 3_600_000);
  return {
    patch: {
      status,
      ...(status !== current.status ? { status_since: now } : {}),
      ...(stall.error ? { error: JSON.stringify(stall.error) } : {}),
      stalled: 1,
      stalled_reason: stall.message,
      ...(current.task_id ? { next_check_at: now + slow + Math.round(slow * 0.2 * random()), check_kind: 'poll' } : { next_check_at: null, check_kind: null }),
      attempt: 0,
    },
    events,
    value: null,
  };
}
