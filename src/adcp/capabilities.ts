/**
 * What an agent says of itself (`get_adcp_capabilities`), read into the parts we
 * act on, and checked: a declaration we cannot trust (a malformed version string,
 * a replay window outside the spec's 3600–604800 s, a field of the wrong type) is
 * refused whole with a reason, and the agent is then spoken to as a 3.0 agent that
 * declared nothing, never half-believed.
 *
 * Kept as the agent's JSON shows it: `{fetched_at, adcp: {major_versions,
 * supported_versions, idempotency}, request_signing?, webhook_signing?, media_buy?,
 * governance?, protocols}`.
 */
import { z } from 'zod';

/** Release precision (`3.1`, `3.2-beta.5`), as `supported_versions` spells it on the wire. */
const RELEASE = /^\d+\.\d+(-[a-zA-Z0-9.-]+)?$/;

/** The spec's bounds on a declared replay window (get-adcp-capabilities-response.json). */
export const REPLAY_TTL_MIN_S = 3600;
export const REPLAY_TTL_MAX_S = 604800;

const Idempotency = z.union([
  z.object({ supported: z.literal(true), replay_ttl_seconds: z.number().int().min(REPLAY_TTL_MIN_S).max(REPLAY_TTL_MAX_S) }),
  z.object({ supported: z.literal(false) }),
]);

const OperationNames = z.array(z.string().min(1).max(128)).max(200);

const RequestSigning = z.looseObject({
  supported: z.boolean().optional(),
  covers_content_digest: z.enum(['required', 'forbidden', 'either']).optional(),
  required_for: OperationNames.optional(),
  warn_for: OperationNames.optional(),
  supported_for: OperationNames.optional(),
  protocol_methods_supported_for: OperationNames.optional(),
  protocol_methods_warn_for: OperationNames.optional(),
  protocol_methods_required_for: OperationNames.optional(),
});

const WebhookSigning = z.looseObject({
  supported: z.boolean().optional(),
  profile: z.string().optional(),
  algorithms: z.array(z.string()).optional(),
  legacy_hmac_fallback: z.boolean().optional(),
});

const Declaration = z.looseObject({
  adcp: z.looseObject({
    major_versions: z.array(z.number().int().min(1).max(99)).min(1),
    supported_versions: z.array(z.string().regex(RELEASE, 'is not a release (MAJOR.MINOR, optionally -prerelease)')).min(1).optional(),
    idempotency: Idempotency.optional(),
  }),
  supported_protocols: z.array(z.string()).optional(),
  request_signing: RequestSigning.optional(),
  webhook_signing: WebhookSigning.optional(),
  media_buy: z.looseObject({ governance_aware: z.boolean().optional() }).optional(),
  governance: z.looseObject({}).optional(),
});

export interface AgentCapabilities {
  /** When we read them (ISO 8601). */
  fetched_at: string;
  adcp: {
    major_versions: number[];
    supported_versions: string[] | null;
    /** Null: not declared, which the spec says to treat as unsafe for retries. */
    idempotency: { supported: true; replay_ttl_seconds: number } | { supported: false } | null;
  };
  request_signing: z.infer<typeof RequestSigning> | null;
  webhook_signing: z.infer<typeof WebhookSigning> | null;
  media_buy: Record<string, unknown> | null;
  governance: Record<string, unknown> | null;
  protocols: string[];
}

export type CapabilitiesReading = { capabilities: AgentCapabilities } | { error: string };

/** The reply's payload read into capabilities, or why it cannot be trusted. */
export function readCapabilities(payload: Record<string, unknown>, fetchedAt: Date): CapabilitiesReading {
  const parsed = Declaration.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : 'the reply';
    return { error: `capabilities refused: ${where} ${issue.message}` };
  }
  const d = parsed.data;
  return {
    capabilities: {
      fetched_at: fetchedAt.toISOString(),
      adcp: {
        major_versions: d.adcp.major_versions,
        supported_versions: d.adcp.supported_versions ?? null,
        idempotency: d.adcp.idempotency ?? null,
      },
      request_signing: d.request_signing ?? null,
      webhook_signing: d.webhook_signing ?? null,
      media_buy: d.media_buy ?? null,
      governance: d.governance ?? null,
      protocols: d.supported_protocols ?? [],
    },
  };
}
