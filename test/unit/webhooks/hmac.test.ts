/** Legacy HMAC-SHA256: every vector of webhook-hmac-sha256.json, plus rotation and mode rules. */
import { describe, expect, it } from 'vitest';
import { checkHmacSecret, computeHmacSignature, verifyHmacWebhook } from '../../../src/webhooks/hmac.js';
import { strictJsonParse } from '../../../src/webhooks/strict-json.js';
import { readVectorFile } from './vectors.js';

interface HmacVector {
  id: string;
  timestamp: number | string;
  raw_body: string;
  expected_signature?: string;
  expected_verifier_action?: string;
  rfc9421_error_code?: string;
  signature?: string | null;
  current_time?: number;
}

const file = readVectorFile<{
  secret: string;
  vectors: HmacVector[];
  rejection_vectors: HmacVector[];
  secret_rejection_vectors: Array<{ description: string; secret: string }>;
  signer_side: {
    rejection_vectors: Array<{ id: string; signer_input_body: string }>;
    positive_vectors: Array<{ id: string; signer_input_body: string }>;
  };
}>('webhook-hmac-sha256.json');

function headersFor(signature: string | null | undefined, timestamp: number | string): Record<string, string> {
  const headers: Record<string, string> = { 'X-ADCP-Timestamp': String(timestamp) };
  if (signature !== null && signature !== undefined) headers['X-ADCP-Signature'] = signature;
  return headers;
}

describe('HMAC-SHA256 vectors', () => {
  it.each(file.vectors.map((v) => [v.id, v] as const))('%s: signature matches and verifies', (_id, v) => {
    const rawBody = Buffer.from(v.raw_body, 'utf8');
    expect(computeHmacSignature(file.secret, String(v.timestamp), rawBody)).toBe(v.expected_signature);
    const result = verifyHmacWebhook(
      { headers: headersFor(v.expected_signature, v.timestamp), rawBody },
      { secret: file.secret },
      () => Number(v.timestamp) * 1000,
    );
    // The MAC is valid in every one of these, the duplicate-key one included.
    expect(result).toMatchObject({ ok: true, timestamp: Number(v.timestamp) });
    // Then the strict parse decides the body: reject-malformed vectors fail there.
    const parsed = strictJsonParse(rawBody);
    if (v.expected_verifier_action === 'reject-malformed') {
      expect(parsed).toMatchObject({ ok: false, code: v.rfc9421_error_code });
    } else if (v.raw_body !== '' && !v.raw_body.includes('\u0000')) {
      expect(parsed.ok).toBe(true);
    }
  });

  it.each(file.rejection_vectors.map((v) => [v.id, v] as const))('%s: rejected', (_id, v) => {
    const nowS = v.current_time ?? (typeof v.timestamp === 'number' ? v.timestamp : 1_700_000_000);
    const result = verifyHmacWebhook(
      { headers: headersFor(v.signature, v.timestamp), rawBody: Buffer.from(v.raw_body, 'utf8') },
      { secret: file.secret },
      () => nowS * 1000,
    );
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toMatch(/^webhook_signature_/);
      // A timestamp outside the window is a window failure, whatever the signature.
      if (v.current_time !== undefined) expect(result.code).toBe('webhook_signature_window_invalid');
    }
  });

  it.each(file.secret_rejection_vectors.map((v) => [v.description, v] as const))('secret rejected: %s', (_d, v) => {
    expect(checkHmacSecret(v.secret).ok).toBe(false);
  });

  it('the vectors secret itself is acceptable in length and entropy', () => {
    expect(checkHmacSecret(file.secret)).toEqual({ ok: true });
  });

  it.each(file.signer_side.rejection_vectors.map((v) => [v.id, v] as const))(
    'signer-side %s: the body is refused by the strict parser',
    (_id, v) => {
      expect(strictJsonParse(v.signer_input_body)).toMatchObject({ ok: false, code: 'webhook_body_malformed' });
    },
  );

  it.each(file.signer_side.positive_vectors.map((v) => [v.id, v] as const))('signer-side %s: the body parses', (_id, v) => {
    expect(strictJsonParse(v.signer_input_body).ok).toBe(true);
  });
});

describe('HMAC-SHA256 receiver rules', () => {
  const body = Buffer.from('{"task_id":"t1","status":"completed"}');
  const ts = '1700000000';
  const nowMs = 1_700_000_000_000;
  const signed = (secret: string) => ({ 'x-adcp-signature': computeHmacSignature(secret, ts, body), 'x-adcp-timestamp': ts });
  const current = 'c'.repeat(16) + 'd'.repeat(16) + 'e'.repeat(8);
  const previous = 'p'.repeat(16) + 'q'.repeat(16) + 'r'.repeat(8);

  it('accepts uppercase hex and exactly ±300 s, refuses 301 s', () => {
    const upper = { 'x-adcp-signature': signed(current)['x-adcp-signature'].replace(/=(.*)$/, (_m, hex: string) => `=${hex.toUpperCase()}`), 'x-adcp-timestamp': ts };
    expect(verifyHmacWebhook({ headers: upper, rawBody: body }, { secret: current }, () => nowMs).ok).toBe(true);
    expect(verifyHmacWebhook({ headers: signed(current), rawBody: body }, { secret: current }, () => nowMs + 300_000).ok).toBe(true);
    expect(verifyHmacWebhook({ headers: signed(current), rawBody: body }, { secret: current }, () => nowMs - 300_000).ok).toBe(true);
    expect(verifyHmacWebhook({ headers: signed(current), rawBody: body }, { secret: current }, () => nowMs + 301_000)).toMatchObject({
      ok: false,
      code: 'webhook_signature_window_invalid',
    });
  });

  it('accepts the previous secret only until its rotation deadline', () => {
    const secrets = { secret: current, previous: { secret: previous, validUntilMs: nowMs + 60_000 } };
    expect(verifyHmacWebhook({ headers: signed(previous), rawBody: body }, secrets, () => nowMs)).toMatchObject({
      ok: true,
      usedPreviousSecret: true,
    });
    expect(verifyHmacWebhook({ headers: signed(previous), rawBody: body }, secrets, () => nowMs + 60_001)).toMatchObject({
      ok: false,
      code: 'webhook_signature_invalid',
    });
    expect(verifyHmacWebhook({ headers: signed(current), rawBody: body }, secrets, () => nowMs)).toMatchObject({
      ok: true,
      usedPreviousSecret: false,
    });
  });

  it('refuses timestamps that are not plain digits (signed string must be unambiguous)', () => {
    for (const bad of ['1700000000.0', '+1700000000', '1.7e9', ' 1700000000x', '']) {
      const headers = { 'x-adcp-signature': computeHmacSignature(current, bad, body), 'x-adcp-timestamp': bad };
      expect(verifyHmacWebhook({ headers, rawBody: body }, { secret: current }, () => nowMs)).toMatchObject({
        ok: false,
        code: 'webhook_signature_header_malformed',
      });
    }
  });

  it('refuses a repeated signature header instead of picking one', () => {
    const headers = { 'x-adcp-signature': [signed(current)['x-adcp-signature'], 'sha256=' + '0'.repeat(64)], 'x-adcp-timestamp': ts };
    expect(verifyHmacWebhook({ headers, rawBody: body }, { secret: current }, () => nowMs)).toMatchObject({
      ok: false,
      code: 'webhook_signature_header_malformed',
    });
  });

  it('answers webhook_mode_mismatch when an HMAC endpoint gets an RFC 9421 signature', () => {
    const headers = { 'signature-input': 'sig1=()', signature: 'sig1=:AA:' };
    expect(verifyHmacWebhook({ headers, rawBody: body }, { secret: current }, () => nowMs)).toMatchObject({
      ok: false,
      code: 'webhook_mode_mismatch',
    });
  });
});
