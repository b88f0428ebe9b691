/**
 * One circuit breaker per agent (cockatiel). Consecutive transient failures
 * open it; while open, work for that agent waits instead of failing; after the
 * half-open delay one probe goes through and its outcome closes or reopens it.
 *
 * State is per process: with several instances each learns an agent's health
 * from its own calls, which is the usual trade-off (a shared breaker would need
 * a write per call). The `circuit_state{agent}` gauge shows each process's view.
 */
import { BrokenCircuitError, circuitBreaker, CircuitState, ConsecutiveBreaker, handleWhen, type CircuitBreakerPolicy } from 'cockatiel';
import type { Gauge } from 'prom-client';

export { BrokenCircuitError };

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

  /** Runs a call to the agent through its breaker; throws BrokenCircuitError while open. */
  execute<T>(agentId: string, agentName: string, fn: () => Promise<T>): Promise<T> {
    return this.entry(agentId, agentName).policy.execute(fn);
  }

  /**
   * When an open breaker will let a probe through, or null when a call may go now.
   * cockatiel moves to half-open lazily, on the first call after the delay, so past
   * that moment we must let a call reach `execute` for the probe to happen at all.
   */
  retryAt(agentId: string, now = Date.now()): number | null {
    const e = this.breakers.get(agentId);
    if (!e || e.policy.state !== CircuitState.Open) return null;
    const probeAt = e.openedAt + this.opts.halfOpenAfterMs;
    return now >= probeAt ? null : probeAt;
  }

  state(agentId: string): CircuitState {
    return this.breakers.get(agentId)?.policy.state ?? CircuitState.Closed;
  }
}
