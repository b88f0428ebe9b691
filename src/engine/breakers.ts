/**
 * One circuit breaker per agent (cockatiel). Consecutive transient failures
 * open it; while open, work for that agent waits instead of failing; after the
 * half-open delay one probe goes through and its outcome closes or reopens it.
 *
 * State is per process: with several instances each learns an agent's health
 * from its own calls, which is the usual trade-off (a shared breaker would need
 * a write per call). The `circuit_state{agent}` gauge shows each process's view.
 *
 * Every call also goes through the agent's bulkhead (agent-bulkheads.ts), outside
 * the breaker: a call refused for want of a slot never reaches the breaker. The
 * refusal, AgentBusyError, is a BrokenCircuitError, so callers wait it out the same way.
 */
import { BrokenCircuitError, circuitBreaker, CircuitState, ConsecutiveBreaker, handleWhen, type CircuitBreakerPolicy } from 'cockatiel';
import type { Gauge } from 'prom-client';
import { AgentBusyError, type AgentBulkheads } from './agent-bulkheads.js';

export { AgentBusyError, BrokenCircuitError };

/** How soon work refused by a full bulkhead is due again (plus the caller's jitter). */
const BUSY_RETRY_MS = 1_000;

const GAUGE_VALUE: Record<CircuitState, number> = {
  [CircuitState.Closed]: 0,
  [CircuitState.HalfOpen]: 1,
  [CircuitState.Open]: 2,
  [CircuitState.Isolated]: 2,
};

export class AgentBreakers {
  private readonly breakers = new Map<string, { policy: CircuitBreakerPolicy; openedAt: number }>();

  constructor(
    private readonly opts: { threshold: number; halfOpenAfterMs: number; isFailure: (err: unknown) => boolean },
    private readonly gauge: Gauge,
    private readonly bulkheads?: AgentBulkheads,
  ) {}

  private entry(agentId: string, agentName: string) {
    let e = this.breakers.get(agentId);
    if (!e) {
      const policy = circuitBreaker(handleWhen(this.opts.isFailure), {
        halfOpenAfter: this.opts.halfOpenAfterMs,
        breaker: new ConsecutiveBreaker(this.opts.threshold),
      });
      const entry = { policy, openedAt: 0 };
      policy.onStateChange((state) => {
        if (state === CircuitState.Open) entry.openedAt = Date.now();
        this.gauge.set({ agent: agentName }, GAUGE_VALUE[state]);
      });
      this.gauge.set({ agent: agentName }, 0);
      this.breakers.set(agentId, entry);
      e = entry;
    }
    return e;
  }

  /**
   * Runs a call to the agent in a slot of its bulkhead, through its breaker; throws
   * BrokenCircuitError while the breaker is open, AgentBusyError (one) when no slot came free.
   */
  execute<T>(agentId: string, agentName: string, fn: () => Promise<T>): Promise<T> {
    const guarded = () => this.entry(agentId, agentName).policy.execute(fn);
    return this.bulkheads ? this.bulkheads.execute(agentId, agentName, guarded) : guarded();
  }

  /**
   * When work for the agent may go, or null when a call may go now: an open breaker's
   * probe time, or shortly for a full bulkhead. cockatiel moves to half-open lazily, on
   * the first call after the delay, so past that moment we must let a call reach
   * `execute` for the probe to happen at all.
   */
  retryAt(agentId: string, now = Date.now()): number | null {
    const e = this.breakers.get(agentId);
    if (e && e.policy.state === CircuitState.Open) {
      const probeAt = e.openedAt + this.opts.halfOpenAfterMs;
      if (now < probeAt) return probeAt;
    }
    return this.bulkheads?.full(agentId) ? now + BUSY_RETRY_MS : null;
  }

  state(agentId: string): CircuitState {
    return this.breakers.get(agentId)?.policy.state ?? CircuitState.Closed;
  }
}
