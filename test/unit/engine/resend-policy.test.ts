/**
 * Whether an ambiguous send may go again under its key, by what the seller declared:
 * within its replay_ttl_seconds (never longer than ours), never at a seller declaring
 * supported:false or nothing, our own window for a plain 3.0 agent.
 */
import { describe, expect, it } from 'vitest';
import { readCapabilities } from '../../../src/adcp/capabilities.js';
import { resendDecision, stanceOf, type IdempotencyStance } from '../../../src/engine/resend-policy.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-06-01T00:00:00Z');

/** An agent row as agent-capabilities.ts stores what the agent said. */
function agentSaying(idempotency: unknown): { capabilities: string | null; capabilities_error: string | null } {
  const reading = readCapabilities({ adcp: { major_versions: [3], ...(idempotency === undefined ? {} : { idempotency }) } }, new Date(T0));
  return 'error' in reading
    ? { capabilities: null, capabilities_error: `${reading.error}: spoken to as AdCP 3.0` }
    : { capabilities: JSON.stringify(reading.capabilities), capabilities_error: null };
}

const decide = (stance: IdempotencyStance, ageMs: number, ourWindowMs = DAY) =>
  resendDecision({ stance, firstSentAt: T0, now: T0 + ageMs, ourWindowMs, marginMs: 30_000 });

describe('stanceOf: what the agent declared of replaying', () => {
  it('reads a declared window, supported:false, and a declaration without idempotency', () => {
    expect(stanceOf(agentSaying({ supported: true, replay_ttl_seconds: 3600 }))).toEqual({ kind: 'replays', ttlSeconds: 3600 });
    expect(stanceOf(agentSaying({ supported: false }))).toEqual({ kind: 'unsupported' });
    expect(stanceOf(agentSaying(undefined))).toEqual({ kind: 'undeclared' });
  });

  it('a declaration we refused (a window below the spec minimum) is undeclared, not our default', () => {
    const stance = stanceOf(agentSaying({ supported: true, replay_ttl_seconds: 60 }));
    expect(stance.kind).toBe('undeclared');
  });

  it('an agent without capabilities (a plain 3.0 agent, or never asked) has none', () => {
    expect(stanceOf({ capabilities: null, capabilities_error: 'no capabilities (the agent answered NOT_SUPPORTED): spoken to as AdCP 3.0' })).toEqual({ kind: 'no_capabilities' });
    expect(stanceOf({ capabilities: null, capabilities_error: null })).toEqual({ kind: 'no_capabilities' });
    expect(stanceOf({})).toEqual({ kind: 'no_capabilities' });
  });
});

describe('resendDecision', () => {
  it('resends within the seller\'s declared window, looks up past it (less the margin for the resend to arrive)', () => {
    const oneHour: IdempotencyStance = { kind: 'replays', ttlSeconds: 3600 };
    expect(decide(oneHour, 10 * 60_000)).toEqual({ kind: 'resend' });
    expect(decide(oneHour, HOUR - 30_000)).toEqual({ kind: 'resend' });
    const late = decide(oneHour, HOUR - 29_000);
    expect(late.kind).toBe('look_up');
    expect(late.kind === 'look_up' && late.why).toMatch(/declared replay window \(replay_ttl_seconds 3600/);
    // Two hours: the case our own 24 h window used to resend blindly.
    expect(decide(oneHour, 2 * HOUR).kind).toBe('look_up');
  });

  it('takes the smaller of the seller\'s window and ours', () => {
    const week: IdempotencyStance = { kind: 'replays', ttlSeconds: 604_800 };
    expect(decide(week, 2 * DAY).kind).toBe('look_up');
    const past = decide(week, 2 * DAY);
    expect(past.kind === 'look_up' && past.why).toMatch(/our replay window \(ADCP_ORCH_REPLAY_WINDOW_MS/);
    expect(decide(week, 2 * DAY, 3 * DAY)).toEqual({ kind: 'resend' });
  });

  it('never resends blindly at a seller declaring supported:false, however young the send', () => {
    const d = decide({ kind: 'unsupported' }, 1_000);
    expect(d.kind).toBe('look_up');
    expect(d.kind === 'look_up' && d.why).toMatch(/supported: false/);
  });

  it('never resends blindly at a seller that answered capabilities without declaring idempotency', () => {
    const d = decide({ kind: 'undeclared' }, 1_000);
    expect(d.kind).toBe('look_up');
    expect(d.kind === 'look_up' && d.why).toMatch(/declares no idempotency support/);
    const refused = decide({ kind: 'undeclared', refused: 'capabilities refused: adcp.idempotency …' }, 1_000);
    expect(refused.kind === 'look_up' && refused.why).toMatch(/could not be trusted/);
  });

  it('keeps our own window for an agent with no capabilities (a plain 3.0 agent)', () => {
    expect(decide({ kind: 'no_capabilities' }, 2 * HOUR)).toEqual({ kind: 'resend' });
    expect(decide({ kind: 'no_capabilities' }, DAY)).toEqual({ kind: 'resend' });
    const d = decide({ kind: 'no_capabilities' }, DAY + 1);
    expect(d.kind === 'look_up' && d.why).toMatch(/replay window we assume/);
  });

  it('counts the age from the key\'s first send, not from anything earlier', () => {
    // A held buy created days before its first send is as young as that send.
    expect(resendDecision({ stance: { kind: 'replays', ttlSeconds: 3600 }, firstSentAt: T0, now: T0 + 60_000, ourWindowMs: DAY, marginMs: 30_000 })).toEqual({ kind: 'resend' });
  });
});
