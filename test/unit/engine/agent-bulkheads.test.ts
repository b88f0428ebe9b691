/**
 * The bulkhead per agent (src/engine/agent-bulkheads.ts) and how it sits in front of
 * the agent's circuit breaker (src/engine/breakers.ts): calls beyond the slots wait in
 * a bounded queue, for a bounded time; a refusal is an AgentBusyError (a
 * BrokenCircuitError, so callers wait it out) and never reaches the breaker, neither
 * as a failure nor as the half-open probe.
 */
import { CircuitState } from 'cockatiel';
import { Registry, Gauge } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AgentBusyError, AgentBulkheads } from '../../../src/engine/agent-bulkheads.js';
import { AgentBreakers, BrokenCircuitError } from '../../../src/engine/breakers.js';

/** A call that runs until released. */
function held() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { fn: () => done, release };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('AgentBulkheads', () => {
  it('runs at most maxConcurrent calls of an agent at once, queues maxQueued, refuses the rest', async () => {
    const bulkheads = new AgentBulkheads({ maxConcurrent: 2, maxQueued: 1, maxWaitMs: 5_000 });
    let running = 0;
    let most = 0;
    const calls = Array.from({ length: 5 }, () => held());
    const results = calls.map((c) =>
      refusal(
        bulkheads.execute('a1', 'seller', async () => {
          most = Math.max(most, ++running);
          await c.fn();
          running--;
        }),
      ),
    );
    // Two run, one waits, two are refused at once.
    expect(await results[3]).toBeInstanceOf(AgentBusyError);
    expect(await results[4]).toBeInstanceOf(AgentBusyError);
    expect(bulkheads.full('a1')).toBe(true);
    expect(bulkheads.full('another')).toBe(false); // per agent
    for (const c of calls) c.release();
    expect(await Promise.all(results.slice(0, 3))).toEqual([undefined, undefined, undefined]);
    expect(most).toBe(2);
    expect(bulkheads.full('a1')).toBe(false);
  });

  it('a queued call waits at most maxWaitMs, then is refused, and its place is given back', async () => {
    const bulkheads = new AgentBulkheads({ maxConcurrent: 1, maxQueued: 1, maxWaitMs: 50 });
    const first = held();
    const running = bulkheads.execute('a1', 'seller', first.fn);
    let ranLate = false;
    const queued = refusal(bulkheads.execute('a1', 'seller', async () => void (ranLate = true)));
    const err = await queued;
    expect(err).toBeInstanceOf(AgentBusyError);
    expect(err).toBeInstanceOf(BrokenCircuitError);
    first.release();
    await running;
    // The refused call never runs, and the slot goes to the next call.
    expect(await bulkheads.execute('a1', 'seller', async () => 'next')).toBe('next');
    expect(ranLate).toBe(false);
  });
});

describe('AgentBreakers with a bulkhead', () => {
  const gauge = () => new Gauge({ name: 'circuit_state_test', help: 'test', labelNames: ['agent'], registers: [new Registry()] });

  it('a refusal is not a failure: the breaker stays closed, and retryAt says when to look again', async () => {
    const bulkheads = new AgentBulkheads({ maxConcurrent: 1, maxQueued: 0, maxWaitMs: 5_000 });
    const breakers = new AgentBreakers({ threshold: 1, halfOpenAfterMs: 60_000, isFailure: () => true }, gauge(), bulkheads);
    const hung = held();
    const running = breakers.execute('a1', 'seller', hung.fn);
    for (let i = 0; i < 3; i++) expect(await refusal(breakers.execute('a1', 'seller', async () => 'never'))).toBeInstanceOf(AgentBusyError);
    expect(breakers.state('a1')).toBe(CircuitState.Closed);
    expect(breakers.retryAt('a1', 1_000)).toBe(2_000); // full: shortly
    hung.release();
    await running;
    expect(breakers.retryAt('a1', 1_000)).toBeNull();
  });

  it('a refusal is not the half-open probe: it neither closes nor reopens the breaker', async () => {
    const bulkheads = new AgentBulkheads({ maxConcurrent: 1, maxQueued: 0, maxWaitMs: 5_000 });
    const breakers = new AgentBreakers({ threshold: 1, halfOpenAfterMs: 20, isFailure: () => true }, gauge(), bulkheads);
    await refusal(breakers.execute('a1', 'seller', async () => Promise.reject(new Error('seller down'))));
    expect(breakers.state('a1')).toBe(CircuitState.Open);
    await new Promise((resolve) => setTimeout(resolve, 30));
    // The probe is let through and hangs; a call refused meanwhile changes nothing.
    const probe = held();
    const probing = breakers.execute('a1', 'seller', probe.fn);
    expect(breakers.state('a1')).toBe(CircuitState.HalfOpen);
    expect(await refusal(breakers.execute('a1', 'seller', async () => 'x'))).toBeInstanceOf(AgentBusyError);
    expect(breakers.state('a1')).toBe(CircuitState.HalfOpen);
    probe.release();
    await probing;
    expect(breakers.state('a1')).toBe(CircuitState.Closed);
  });
});
