/**
 * One signing-key source per agent, kept between deliveries: the URL-backed
 * sources cache the seller's keys (and rate-limit refetches), so building a new
 * one per webhook would defeat that.
 */
import { keySourceFromConfig, type WebhookKeySource, type WebhookSigningConfig } from '../adcp/webhook-signature.js';
import type { AgentRow } from '../store/index.js';

export class AgentKeySources {
  private readonly cache = new Map<string, { config: string; source: WebhookKeySource | null }>();

  constructor(private readonly allowPrivateNetwork: boolean) {}

  for(agent: AgentRow): WebhookKeySource | null {
    const config = agent.webhook_signing ?? '';
    const hit = this.cache.get(agent.id);
    if (hit && hit.config === config) return hit.source;
    const source = config
      ? keySourceFromConfig(JSON.parse(config) as WebhookSigningConfig, {
          allowPrivateNetwork: this.allowPrivateNetwork,
          agentType: agent.role === 'governance' ? 'governance' : 'sales',
        })
      : null;
    this.cache.set(agent.id, { config, source });
    return source;
  }
}
