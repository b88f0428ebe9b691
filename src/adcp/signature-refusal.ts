/**
 * A seller refusing our request signature (security.mdx, "Transport error taxonomy"):
 * HTTP 401 with `WWW-Authenticate: Signature error="<code>"`, or the code in an AdCP
 * error. Every such code but one says the request can never pass as it is, so it is
 * terminal: the operation ends with the seller's code and a message that says what to
 * look at, and is never sent again blindly. (`request_signature_jwks_unavailable` is
 * the spec's one retryable code; it ends the operation too, since what it asks is
 * whether the seller can reach our JWKS, which a resend does not change.)
 */
import type { AdcpError } from './types.js';

const SIGNATURE_CODE = /^(request_signature_[a-z0-9_]+|request_target_uri_malformed|request_body_malformed)$/;

export function isSignatureRefusalCode(code: string): boolean {
  return SIGNATURE_CODE.test(code);
}

/** The code of a `Signature error="…"` challenge, when the header carries one we know the shape of. */
export function challengeCode(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const m = /(?:^|,)\s*Signature\s+(?:[^,]*?\s)?error="([a-z0-9_]+)"/i.exec(header) ?? /\berror="([a-z0-9_]+)"/i.exec(header);
  const code = m?.[1];
  return code && isSignatureRefusalCode(code) ? code : undefined;
}

const JWKS = 'that the seller can fetch our JWKS (GET /.well-known/jwks.json on ADCP_ORCH_PUBLIC_URL, also named by /.well-known/brand.json) and that it lists the key we sign with (adcp-orchestrator signing-keys list)';
const CLOCK = "this machine's clock (a signature is valid for 5 minutes, give or take 60 seconds of the seller's clock)";
const BYTES = 'whether something between us and the seller (a proxy, a gateway) rewrites the body, the Host or the URL of requests, and the seller\'s covers_content_digest';

const WHAT_TO_CHECK: Readonly<Record<string, string>> = {
  request_signature_required: `the seller wants this request signed and it was not: refresh the agent's capabilities (POST /v1/agents/:id/refresh) so we know what it requires, and check ${JWKS}`,
  request_signature_key_unknown: JWKS,
  request_signature_jwks_unavailable: JWKS,
  request_signature_jwks_untrusted: `${JWKS}; the seller refuses to fetch keys from a private address or over plain HTTP`,
  request_signature_key_purpose_invalid: JWKS,
  request_signature_key_revoked: `${JWKS}; the key we signed with is revoked: rotate it (adcp-orchestrator signing-keys rotate)`,
  request_signature_window_invalid: CLOCK,
  request_signature_replayed: `${CLOCK}; a nonce was seen twice, which a fresh signature per request never does`,
  request_signature_invalid: BYTES,
  request_signature_digest_mismatch: BYTES,
  request_signature_components_incomplete: `the seller's covers_content_digest (refresh the agent's capabilities) and ${BYTES}`,
  request_signature_components_unexpected: "the seller's covers_content_digest: refresh the agent's capabilities",
  request_target_uri_malformed: "the agent's registered URL and whether a proxy changes the Host",
};

/** `error` with a message saying what to check (the seller's own words kept first). */
export function explainSignatureRefusal(error: AdcpError): AdcpError {
  if (!isSignatureRefusalCode(error.code)) return error;
  const check = WHAT_TO_CHECK[error.code] ?? `${JWKS}, and ${CLOCK}`;
  const said = error.message && error.message !== error.code ? `${error.message}. ` : '';
  return { ...error, recovery: 'terminal', message: `The seller refused our request signature (${error.code}). ${said}Check ${check}.` };
}
