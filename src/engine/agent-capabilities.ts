/**
 * Asking each agent what it supports (`get_adcp_capabilities`) and keeping the
 * answer: at registration, on `POST /v1/agents/:id/refresh`, and every
 * ADCP_ORCH_CAPABILITIES_REFRESH_MS. The version we speak with the agent follows
 * from it (src/adcp/dialect.ts) and is stored beside it.
 *
 * The call needs no `idempotency_key` (a read, the spec's bootstrap carve-out). An
 * agent that answers with an error (a 3.0 agent without the tool) or a declaration we
 * cannot trust is kept with no capabilities and the reason, and spoken to as 3.0,
 * as before. An agent we could not reach keeps what it said before: a network blip
 * must not turn a 3.1 seller into a 3.0 one.
 */
import type { Logger } from 'pino';
import { readCapabilities, type AgentCapabilities } from '../adcp/capabilities.js';
import { chooseDialect } from '../adcp/dialect.js';
import type { AdcpClient } from '../adcp/types.js';
import type { AgentRow, Store } from '../store/index.js';
import type { SecretBox } from '../store/secret-box.js';
import { dialectOf, endpointFor } from './agent-endpoints.js';
import type { Clock } from './clock.js';

export interface CapabilitiesDeps {
  store: Store;
  adcp: AdcpClient;
  secrets: SecretBox;
  clock: Clock;
  log: Logger;
  /** How long one ask may take. */
  timeoutMs: number;
}

export class AgentCapabilitiesService {
  constructor(private readonly deps: CapabilitiesDeps) {}

  /** Asks the agent now and stores what it said; returns the agent as stored after. */
  async refresh(agent: AgentRow): Promise<AgentRow> {
    const { store, adcp, secrets, clock, log, timeoutMs } = this.deps;
    const now = clock.now();
    let update: Parameters<Store['agents']['updateCapabilities']>[1];
    try {
      const reply = await adcp.callTask(endpointFor(agent, secrets), 'get_adcp_capabilities', {}, { timeoutMs });
      if (reply.error || reply.status !== 'completed') {
        const why = reply.error ? `${reply.error.code}${reply.error.message ? `: ${reply.error.message}` : ''}` : `status ${reply.status}`;
        update = { capabilities: null, fetchedAt: now, error: `no capabilities (the agent answered ${why}): spoken to as AdCP 3.0`, adcpVersion: '3.0' };
      } else {
        update = this.taken(readCapabilities(reply.data, new Date(now)), now);
      }
    } catch (err) {
      // Unreachable, or no answer: what it said before stands.
      const message = err instanceof Error ? err.message : String(err);
      update = { fetchedAt: now, error: `could not ask for capabilities: ${message}`, adcpVersion: dialectOf(agent).version };
    }
    await store.agents.updateCapabilities(agent.id, update);
    if (update.error) log.warn({ agent_id: agent.id, agent: agent.name, error: update.error }, 'agent capabilities');
    else log.info({ agent_id: agent.id, agent: agent.name, adcp_version: update.adcpVersion }, 'agent capabilities read');
    return (await store.agents.get(agent.id)) ?? agent;
  }

  /** Refreshes, oldest first, the agents not asked within `intervalMs`; returns how many were asked. */
  async refreshDue(intervalMs: number, limit = 20): Promise<number> {
    const due = await this.deps.store.agents.capabilitiesDue(this.deps.clock.now() - intervalMs, limit);
    for (const agent of due) await this.refresh(agent);
    return due.length;
  }

  private taken(reading: ReturnType<typeof readCapabilities>, now: number) {
    if ('error' in reading) return { capabilities: null, fetchedAt: now, error: `${reading.error}: spoken to as AdCP 3.0`, adcpVersion: '3.0' };
    const caps: AgentCapabilities = reading.capabilities;
    const { dialect, problem } = chooseDialect(caps);
    return { capabilities: JSON.stringify(caps), fetchedAt: now, error: problem ?? null, adcpVersion: dialect.version };
  }
}
