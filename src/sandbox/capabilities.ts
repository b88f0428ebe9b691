/**
 * What the sandbox seller says of itself (`get_adcp_capabilities`) beyond what the
 * SDK derives from its tools: the versions it speaks, its replay window (kept by
 * its ledger, idempotency.ts), whether it consults a governance agent, how it
 * delivers reports.
 *
 * The SDK answers `get_adcp_capabilities` itself (a custom tool of that name is
 * refused), from its `capabilities` config: what it does not derive is given as
 * `overrides`, deep-merged onto its answer. A 3.1 answer also needs the protocol
 * envelope the 3.0 SDK leaves out (`status`, `adcp_version`); it is checked against
 * the 3.1.19 schema once, when the seller starts (`assertCapabilities31`): it is
 * the same for every call.
 */
import type { AdcpServer } from '@adcp/sdk/server';
import type { ReplayDeclaration } from './idempotency.js';
import { assertValid31Reply } from './replies-31.js';
import { supportedVersions, type SellerVersion } from './versions.js';

export interface Declaration {
  version: SellerVersion;
  replay: ReplayDeclaration;
  /** `media_buy.governance_aware`: declared by a 3.1 seller always (default false), by a 3.0 seller only when set. */
  governanceAware?: boolean;
  /** `request_signing`: declared by a seller that verifies signed requests (signed-requests.ts). */
  requestSigning?: Record<string, unknown>;
}

/** The `capabilities` config of createAdcpServer for this declaration (`{supported: false}` is the server's `idempotency: 'disabled'`). */
export function capabilitiesConfig(d: Declaration): Record<string, unknown> {
  const governanceAware = d.governanceAware ?? (d.version === '3.1' ? false : undefined);
  const mediaBuy: Record<string, unknown> = {
    ...(governanceAware !== undefined && { governance_aware: governanceAware }),
    // Reports are pushed to reporting_webhook; 3.1 says so here (absent means polling only).
    ...(d.version === '3.1' && { reporting_delivery_methods: ['webhook'] }),
  };
  return {
    // Our mutating tools (custom tools) enforce this window themselves (SellerCore's ledger).
    ...(d.replay.supported && { idempotency: { replay_ttl_seconds: d.replay.replay_ttl_seconds } }),
    overrides: {
      webhook_signing: {
        supported: true,
        profile: 'adcp/webhook-signing/v1',
        algorithms: ['ed25519'],
        legacy_hmac_fallback: true,
      },
      ...(d.version === '3.1' && { adcp: { supported_versions: supportedVersions(d.version) } }),
      ...(Object.keys(mediaBuy).length > 0 && { media_buy: mediaBuy }),
      ...(d.requestSigning && { request_signing: d.requestSigning }),
      ...(d.version === '3.1' && { status: 'completed', adcp_version: '3.1' }),
    },
  };
}

/** Asks the server for its capabilities once and checks the answer against 3.1.19 (throws when it is off it). */
export async function assertCapabilities31(server: AdcpServer): Promise<void> {
  const reply = (await server.invoke({ toolName: 'get_adcp_capabilities', args: {} })) as { structuredContent?: Record<string, unknown> };
  assertValid31Reply('get_adcp_capabilities', reply.structuredContent ?? {});
}
