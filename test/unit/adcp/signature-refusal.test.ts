/**
 * A seller refusing our request signature (signature-refusal.ts, http-failure.ts): the
 * code is read from `WWW-Authenticate: Signature error="…"` or the 401's body, or from an
 * AdCP error; it is terminal whatever the seller said (a resend cannot make the same
 * signature pass) and its message says what to check. Other 401s are left alone.
 */
import { describe, expect, it } from 'vitest';
import { httpFailureError } from '../../../src/adcp/http-failure.js';
import { toAdcpError } from '../../../src/adcp/extract-error.js';
import { recoveryForCode, resolveRecovery } from '../../../src/adcp/recovery.js';
import { challengeCode } from '../../../src/adcp/signature-refusal.js';
import { isRetryableSendFailure } from '../../../src/engine/call-outcomes.js';
import { AdcpTransportError } from '../../../src/adcp/types.js';

describe('a refused request signature', () => {
  it('is read from the challenge and the body of a 401, with what to check', () => {
    const error = httpFailureError({
      status: 401,
      wwwAuthenticate: 'Signature error="request_signature_key_unknown"',
      body: JSON.stringify({ error: 'request_signature_key_unknown', message: 'No JWK found for keyid "k1"' }),
    })!;
    expect(error).toMatchObject({ code: 'request_signature_key_unknown', recovery: 'terminal', details: { http_status: 401 } });
    expect(error.message).toBe(
      'The seller refused our request signature (request_signature_key_unknown). No JWK found for keyid "k1". Check that the seller can fetch our JWKS (GET /.well-known/jwks.json on ADCP_ORCH_PUBLIC_URL, also named by /.well-known/brand.json) and that it lists the key we sign with (adcp-orchestrator signing-keys list).',
    );
    expect(isRetryableSendFailure(new AdcpTransportError('HTTP 401 from agent', 'http', 401, error))).toBe(false);
  });

  it('names the clock for a window refusal, and a proxy for a broken signature', () => {
    expect(httpFailureError({ status: 401, wwwAuthenticate: 'Signature error="request_signature_window_invalid"' })!.message).toMatch(/clock/);
    expect(httpFailureError({ status: 401, body: '{"error":"request_signature_digest_mismatch"}' })!.message).toMatch(/proxy/);
    expect(httpFailureError({ status: 401, body: '{"error":"request_signature_required"}' })!.message).toMatch(/refresh the agent's capabilities/);
  });

  it('tolerates other challenge parameters and schemes beside it', () => {
    expect(challengeCode('Bearer realm="x", Signature error="request_signature_invalid"')).toBe('request_signature_invalid');
    expect(challengeCode('Signature realm="r", error="request_signature_replayed"')).toBe('request_signature_replayed');
    expect(challengeCode('Bearer error="invalid_token"')).toBeUndefined();
    expect(challengeCode(undefined)).toBeUndefined();
  });

  it('leaves other 401s as they were', () => {
    expect(httpFailureError({ status: 401, wwwAuthenticate: 'Bearer error="invalid_token"', body: '{"error":"unauthorized"}' })).toBeUndefined();
  });

  it('carried as an AdCP error, is terminal even when the seller said transient, with what to check', () => {
    expect(recoveryForCode('request_signature_window_invalid')).toBe('terminal');
    expect(resolveRecovery('request_signature_jwks_unavailable', undefined)).toBe('terminal');
    const error = toAdcpError({ code: 'request_signature_jwks_unavailable', recovery: 'transient', message: 'JWKS fetch failed' });
    expect(error).toMatchObject({ code: 'request_signature_jwks_unavailable', recovery: 'terminal' });
    expect(error.message).toMatch(/^The seller refused our request signature \(request_signature_jwks_unavailable\)\. JWKS fetch failed\. Check that the seller can fetch our JWKS/);
    // Other errors are untouched.
    expect(toAdcpError({ code: 'RATE_LIMITED', message: 'slow down' })).toEqual({ code: 'RATE_LIMITED', recovery: 'transient', message: 'slow down' });
  });
});
