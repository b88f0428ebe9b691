/**
 * One bulkhead per agent (cockatiel): at most `maxConcurrent` calls to an agent run
 * at once in this process, at most `maxQueued` more wait for a slot, each for at most
 * `maxWaitMs`; a call beyond that is refused with AgentBusyError before anything is
 * sent.
 *
 * Why: every call holds a connection to the agent for as long as it runs. Sends made
 * by API requests, the scheduler's sends, resends and polls, answers and governance
 * steps all add up, and a seller that answers slowly (or drips its answer) would
 * otherwise hold as many of our sockets as we open. With the bulkhead, one agent holds
 * at most `maxConcurrent` of them, however it behaves (a call given up at its deadline
 * closes its connection: see src/adcp/call-scope.ts).
 *
 * A refusal is not the agent's fault and nothing reached it: AgentBusyError is a
 * BrokenCircuitError, so every caller that already waits out an open breaker (the work
 * stays due, a little later, the wait not counted as an attempt, nothing counted
 * against the agent) waits out a full bulkhead the same way. It is applied outside the
 * breaker (breakers.ts) so that a refused call never reaches it: not as a failure, and
 * not as the half-open probe.
 */
import { BrokenCircuitError, BulkheadPolicy, BulkheadRejectedError, bulkhead } from 'cockatiel';

/** The agent already has as many calls running and waiting as it may: try again shortly. */
export class AgentBusyError extends BrokenCircuitError {
  constructor(readonly agentName: string) {
    super(`agent ${agentName} has as many calls running and waiting as allowed (ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS); will try again shortly`);
    this.name = 'AgentBusyError';
  }
}

export interface BulkheadLimits {
  maxConcurrent: number;
  maxQueued: number;
  /** How long a call waits for a slot before it is refused. */
  maxWaitMs: number;
}

export class AgentBulkheads {
  private readonly policies = new Map<string, BulkheadPolicy>();

  constructor(private readonly limits: BulkheadLimits) {}

  private policy(agentId: string): BulkheadPolicy {
    let policy = this.policies.get(agentId);
    if (!policy) {
      policy = bulkhead(this.limits.maxConcurrent, this.limits.maxQueued);
      this.policies.set(agentId, policy);
    }
    return policy;
  }

  /** Whether a call to the agent would be refused now (every slot and queue place taken). */
  full(agentId: string): boolean {
    const policy = this.policies.get(agentId);
    return policy !== undefined && policy.executionSlots <= 0 && policy.queueSlots <= 0;
  }

  /** Runs `fn` in one of the agent's slots; throws AgentBusyError when none comes free in time. */
  execute<T>(agentId: string, agentName: string, fn: () => Promise<T>): Promise<T> {
    let gaveUp = false;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        gaveUp = true;
        reject(new AgentBusyError(agentName));
      }, this.limits.maxWaitMs);
      this.policy(agentId)
        .execute(async () => {
          // Our wait ended while queued: give the slot straight back (cockatiel then takes the
          // next in line; a queued call it cancelled itself would leave the slot idle).
          if (gaveUp) throw new AgentBusyError(agentName);
          clearTimeout(timer);
          return fn();
        })
        .then(resolve, (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof BulkheadRejectedError ? new AgentBusyError(agentName) : err);
        });
    });
  }
}
