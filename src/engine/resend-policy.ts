/**
 * Whether an ambiguous send may go again under its idempotency_key (idempotency by
 * capability). Pure: the resend guard (resend-guard.ts) reads the agent and the
 * operation's history and acts on what this decides.
 *
 * A resend under the same key is safe only while the seller still remembers the key:
 * within the replay window it declared (`adcp.idempotency.replay_ttl_seconds`), and
 * never at a seller that declared it keeps none (`supported: false`) or answered its
 * capabilities without saying (the spec: "Clients MUST NOT assume a default ... treated
 * as unsafe for retry-sensitive operations"). Anything else is looked up by natural key
 * first. A plain 3.0 agent (no capabilities at all) keeps our own assumed window,
 * ADCP_ORCH_REPLAY_WINDOW_MS, as before capabilities were read.
 */
import type { AgentCapabilities } from '../adcp/capabilities.js';

export type IdempotencyStance =
  /** `{supported: true, replay_ttl_seconds}` */
  | { kind: 'replays'; ttlSeconds: number }
  /** `{supported: false}`: the key is a no-op, a resend runs again. */
  | { kind: 'unsupported' }
  /** It answered capabilities but declared nothing of idempotency, or something we refused. */
  | { kind: 'undeclared'; refused?: string }
  /** No capabilities: a 3.0 agent without the tool (or not asked yet, or never reached). */
  | { kind: 'no_capabilities' };

/** agent-capabilities.ts keeps a declaration it refused as this error (from readCapabilities). */
const REFUSED = /^capabilities refused: /;

export function stanceOf(agent: { capabilities?: string | null; capabilities_error?: string | null }): IdempotencyStance {
  if (agent.capabilities) {
    const idempotency = (JSON.parse(agent.capabilities) as AgentCapabilities).adcp?.idempotency ?? null;
    if (idempotency === null) return { kind: 'undeclared' };
    return idempotency.supported ? { kind: 'replays', ttlSeconds: idempotency.replay_ttl_seconds } : { kind: 'unsupported' };
  }
  // It did answer, with a declaration we could not trust: its replay window is not known.
  if (agent.capabilities_error && REFUSED.test(agent.capabilities_error)) return { kind: 'undeclared', refused: agent.capabilities_error };
  return { kind: 'no_capabilities' };
}

export interface ResendQuestion {
  stance: IdempotencyStance;
  /** When the key was first sent (the operation's first `calling_adcp`), epoch ms. */
  firstSentAt: number;
  now: number;
  /** ADCP_ORCH_REPLAY_WINDOW_MS: never trusted longer than this, whatever the seller declares. */
  ourWindowMs: number;
  /**
   * Taken off a declared window: a resend decided now reaches the seller up to this much later
   * (a wait for a slot in the agent's bulkhead, at most the call timeout).
   */
  marginMs: number;
}

export type ResendDecision =
  | { kind: 'resend' }
  /** Look the outcome up by natural key first; `why` says why a resend under the key is not safe. */
  | { kind: 'look_up'; why: string };

export function resendDecision(q: ResendQuestion): ResendDecision {
  const age = q.now - q.firstSentAt;
  const s = q.stance;
  switch (s.kind) {
    case 'unsupported':
      return { kind: 'look_up', why: 'the seller declares it does not honour idempotency keys (idempotency.supported: false), so a resend would run again' };
    case 'undeclared':
      return {
        kind: 'look_up',
        why: s.refused
          ? `the seller's capabilities could not be trusted (${s.refused}), so whether it replays is not known`
          : 'the seller declares no idempotency support in its capabilities, which the spec says to treat as unsafe to resend',
      };
    case 'no_capabilities':
      return age <= q.ourWindowMs
        ? { kind: 'resend' }
        : { kind: 'look_up', why: `the send is ${seconds(age)} old, past the replay window we assume (ADCP_ORCH_REPLAY_WINDOW_MS, ${seconds(q.ourWindowMs)})` };
    case 'replays': {
      const declared = s.ttlSeconds * 1000 - q.marginMs;
      if (age <= Math.min(declared, q.ourWindowMs)) return { kind: 'resend' };
      return {
        kind: 'look_up',
        why:
          declared <= q.ourWindowMs
            ? `the send is ${seconds(age)} old, past the seller's declared replay window (replay_ttl_seconds ${s.ttlSeconds}, less ${seconds(q.marginMs)} for the resend to arrive)`
            : `the send is ${seconds(age)} old, past our replay window (ADCP_ORCH_REPLAY_WINDOW_MS, ${seconds(q.ourWindowMs)})`,
      };
    }
  }
}

/** The seller's answer to a resend: it no longer remembers the key. */
export const EXPIRED_CODE = 'IDEMPOTENCY_EXPIRED';
export const EXPIRED_WHY = 'the seller answered IDEMPOTENCY_EXPIRED: it no longer remembers this idempotency key';

const seconds = (ms: number): string => (ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);
