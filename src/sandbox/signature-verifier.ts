/**
 * The sandbox seller's RFC 9421 request verifier (security.mdx, "Verifier checklist
 * (requests)"): the SDK's `verifyRequestSignature` for the checklist itself, and around
 * it what that SDK (6.11) leaves out, so that every negative vector of the spec's
 * request-signing set is refused with its own code (test/unit/sandbox/request-signing-
 * vectors.test.ts):
 *
 * - the pre-check before the checklist: an unsigned request to an operation in
 *   `required_for`, to a protocol method in `protocol_methods_required_for` (the SDK knows
 *   only the first), or carrying webhook credentials to a seller that verifies signatures
 *   (push_notification_config, accounts[].notification_configs and, as SDK-built sellers
 *   from 9.4 do, reporting_webhook), is `request_signature_required`;
 * - the target URI canonicalized by the spec's rules (src/adcp/target-uri.ts) before the
 *   SDK builds its base (its own canonicalization differs), a malformed one being
 *   `request_target_uri_malformed`;
 * - the binary values' alphabet: the 3.0/3.1 wire profile refuses a token mixing
 *   Base64 and Base64URL, the 3.2 one anything but padded RFC 8941 Base64;
 * - a key source that cannot be reached or read is `request_signature_jwks_unavailable`,
 *   never an exception.
 */
import {
  getHeaderValue,
  RequestSignatureError,
  verifyRequestSignature,
  type JwksResolver,
  type ReplayStore,
  type RevocationStore,
} from '@adcp/sdk/signing/server';
import { carriesWebhookCredentials } from '../adcp/signing-policy.js';
import { canonicalTarget, TargetUriError } from '../adcp/target-uri.js';

export type SigningProfile = 'legacy' | 'rfc8941';

export interface VerifierCapability {
  supported: boolean;
  covers_content_digest: 'required' | 'forbidden' | 'either';
  required_for: string[];
  warn_for?: string[];
  supported_for?: string[];
  protocol_methods_required_for?: string[];
  protocol_methods_warn_for?: string[];
  protocol_methods_supported_for?: string[];
}

export interface VerifierConfig {
  capability: VerifierCapability;
  profile: SigningProfile;
  jwks: JwksResolver;
  replay: ReplayStore;
  revocation: RevocationStore;
  /** Epoch seconds. */
  now: () => number;
}

export interface InboundRequest {
  method: string;
  /** The URL as received: scheme, the Host header, the request target. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export type Verdict =
  | { ok: true; status: 'verified'; keyid: string; nonce: string }
  | { ok: true; status: 'unsigned' }
  | { ok: false; code: string; message: string };

/** What a request asks for: the AdCP operation (MCP tool, A2A skill) or the JSON-RPC protocol method, and its parsed body. */
export function requestIdentity(body: string, url: string): { operation?: string; protocolMethod?: string; parsed?: unknown } {
  let parsed: unknown;
  try {
    parsed = body ? JSON.parse(body) : undefined;
  } catch {
    return {};
  }
  const msg = parsed as { method?: unknown; params?: { name?: unknown; message?: { parts?: unknown } } } | undefined;
  if (msg && typeof msg === 'object' && typeof msg.method === 'string' && 'jsonrpc' in msg) {
    if (msg.method === 'tools/call') return { ...(typeof msg.params?.name === 'string' && { operation: msg.params.name }), parsed };
    if (msg.method === 'message/send' || msg.method === 'message/stream') {
      const parts = Array.isArray(msg.params?.message?.parts) ? msg.params.message.parts : [];
      const skill = parts.map((p: { data?: { skill?: unknown } }) => p?.data?.skill).find((s: unknown) => typeof s === 'string') as string | undefined;
      return { ...(skill && { operation: skill }), parsed };
    }
    return { protocolMethod: msg.method, parsed };
  }
  // Not JSON-RPC (the spec's vectors post to /adcp/<operation>): the operation is the last path segment.
  const last = new URL(url, 'http://x').pathname.split('/').filter(Boolean).pop();
  return { ...(last && { operation: last }), parsed };
}

class JwksUnavailable extends Error {}

function refused(code: string, message: string): Verdict {
  return { ok: false, code, message };
}

export async function verifySignedRequest(request: InboundRequest, cfg: VerifierConfig): Promise<Verdict> {
  const { capability } = cfg;
  const sigInput = getHeaderValue(request.headers, 'Signature-Input');
  const sig = getHeaderValue(request.headers, 'Signature');
  const id = requestIdentity(request.body, request.url);
  if (!sigInput && !sig) {
    if (id.operation && capability.required_for.includes(id.operation)) return refused('request_signature_required', `${id.operation} requires a signed request`);
    if (id.protocolMethod && capability.protocol_methods_required_for?.includes(id.protocolMethod)) {
      return refused('request_signature_required', `${id.protocolMethod} requires a signed request`);
    }
    if (capability.supported && carriesWebhookCredentials(id.parsed)) {
      return refused('request_signature_required', 'a request carrying webhook credentials must be signed');
    }
    return { ok: true, status: 'unsigned' };
  }
  if (!sigInput || !sig) return refused('request_signature_header_malformed', 'Signature and Signature-Input come as a pair');
  const alphabet = binaryAlphabetProblem([sig, getHeaderValue(request.headers, 'Content-Digest')], cfg.profile);
  if (alphabet) return refused('request_signature_header_malformed', alphabet);
  // A raw U-label on the wire is malformed (the SDK says so); anything else malformed is the target's.
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(request.url)?.[1] ?? '';
  let url = request.url;
  if (/^[\x21-\x7e]*$/.test(authority)) {
    try {
      url = canonicalTarget(request.url).targetUri;
    } catch (err) {
      if (err instanceof TargetUriError) return refused(err.code, err.message);
      throw err;
    }
  }
  const jwks: JwksResolver = {
    resolve: async (kid) => {
      try {
        return await cfg.jwks.resolve(kid);
      } catch (err) {
        throw new JwksUnavailable(err instanceof Error ? err.message : String(err));
      }
    },
  };
  try {
    const result = await verifyRequestSignature(
      { method: request.method, url, headers: request.headers, body: request.body },
      {
        capability: {
          ...capability,
          // The 3.2 profile binds the body of every signed request.
          covers_content_digest: cfg.profile === 'rfc8941' ? 'required' : capability.covers_content_digest,
          required_for: capability.required_for,
        },
        jwks,
        replayStore: cfg.replay,
        revocationStore: cfg.revocation,
        now: cfg.now,
        ...(id.operation && { operation: id.operation }),
      },
    );
    if (result.status !== 'verified') return { ok: true, status: 'unsigned' };
    const nonce = /;nonce="([^"]*)"/.exec(sigInput)?.[1] ?? '';
    return { ok: true, status: 'verified', keyid: result.keyid, nonce };
  } catch (err) {
    if (err instanceof RequestSignatureError) return refused(err.code, err.message);
    if (err instanceof JwksUnavailable) return refused('request_signature_jwks_unavailable', `the signer's JWKS could not be read: ${err.message}`);
    // Anything else (a JWK whose key cannot be built, a header the parser chokes on) is the request's fault.
    return refused('request_signature_invalid', err instanceof Error ? err.message : String(err));
  }
}

/** Each sf-binary token of the Signature and Content-Digest headers, checked for the profile's alphabet. */
function binaryAlphabetProblem(headers: Array<string | undefined>, profile: SigningProfile): string | undefined {
  for (const header of headers) {
    if (!header) continue;
    for (const m of header.matchAll(/:([^:]*):/g)) {
      const token = m[1]!;
      const standard = /[+/=]/.test(token);
      const url = /[-_]/.test(token);
      if (profile === 'legacy' && standard && url) return 'a binary value mixes the Base64 and Base64URL alphabets';
      if (profile === 'rfc8941' && (url || token.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(token))) {
        return 'AdCP 3.2 binary values are RFC 8941 sf-binary: padded standard Base64';
      }
    }
  }
  return undefined;
}
