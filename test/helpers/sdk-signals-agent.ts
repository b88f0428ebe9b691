/**
 * A signals agent for the integration tests, built on @adcp/sdk's server builder
 * with strict request and response validation (as test/helpers/sdk-seller does for
 * media buys): `activate_signal` activates any segment on the destinations asked
 * for, at once, and keeps what it received, `governance_context` included, so a
 * test can see that a governed activation came with its token. A request off the
 * schema is the SDK's VALIDATION_ERROR (its request log says so).
 *
 *   const signals = await startSdkSignalsAgent();
 *   await orch.registerAgent({ name: 'signals', url: signals.url });
 */
import { createAdcpServer } from '@adcp/sdk/server/legacy/v5';
import { createIdempotencyStore, InMemoryStateStore, memoryBackend } from '@adcp/sdk/server';
import { resolveAccount, type SellerAccount } from './sdk-seller/accounts.js';
import { ReplyFaults, startHttpFront } from './sdk-seller/http.js';
import { RequestLog } from './sdk-seller/request-log.js';

export interface SdkSignalsAgent {
  /** The MCP endpoint: the agent URL to register. */
  url: string;
  log: RequestLog;
  /** The arguments of every activate_signal its handler ran (a replay under the same key runs none). */
  activations: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startSdkSignalsAgent(): Promise<SdkSignalsAgent> {
  const log = new RequestLog();
  const activations: Array<Record<string, unknown>> = [];
  const idempotency = createIdempotencyStore({ backend: memoryBackend(), ttlSeconds: 86_400 });
  const stateStore = new InMemoryStateStore();
  const loose = <F>(f: unknown): F => f as F;
  const build = () =>
    createAdcpServer<SellerAccount>({
      name: 'adcp-orchestrator strict SDK signals agent (tests)',
      version: '1.0.0',
      stateStore,
      idempotency,
      validation: { requests: 'strict', responses: 'strict' },
      resolveAccount: async (ref) => resolveAccount(ref),
      resolveSessionKey: ({ account }) => account?.owner,
      signals: {
        activateSignal: loose(async (params: Record<string, unknown>) => {
          activations.push(structuredClone(params));
          const destinations = Array.isArray(params.destinations) ? (params.destinations as Array<Record<string, unknown>>) : [];
          return {
            deployments: destinations.map((d) =>
              d.type === 'agent'
                ? { type: 'agent', agent_url: d.agent_url, is_live: true, deployed_at: new Date().toISOString() }
                : { type: 'platform', platform: d.platform, is_live: true, deployed_at: new Date().toISOString() },
            ),
          };
        }),
      },
    });
  const front = await startHttpFront({ build, log, jwks: () => ({ keys: [] }), faults: new ReplyFaults() });
  return { url: `${front.origin}/mcp`, log, activations, close: () => front.close() };
}
