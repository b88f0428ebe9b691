/**
 * The sandbox seller requiring signed requests (`requireSignedRequests`, docs/SANDBOX.md,
 * "Signed requests"): it declares `request_signing` in get_adcp_capabilities (by default
 * `create_media_buy` and `update_media_buy` in `required_for`, `covers_content_digest:
 * "required"`) and checks every POST to /mcp and /a2a before it is handled, against the
 * buyer's JWKS fetched from the URL it was given (buyer-keys.ts), with the verifier of
 * signature-verifier.ts. A refusal is HTTP 401 `WWW-Authenticate: Signature
 * error="<code>"` and `{"error": "<code>", "message"}`, as the spec and the SDK's
 * middleware answer. Its posture is the strict one: a listed operation must be signed,
 * whatever bearer token comes with it.
 *
 * Every request it saw is recorded (operation, outcome, keyid, nonce, code, the request's
 * idempotency_key), so a test can show a resend signed afresh under the same key.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InMemoryReplayStore, InMemoryRevocationStore } from '@adcp/sdk/signing/server';
import { BuyerJwks } from './buyer-keys.js';
import { keepBody, readBody, sendJson } from './http.js';
import { requestIdentity, verifySignedRequest, type VerifierCapability, type VerifierConfig } from './signature-verifier.js';

export interface SignedRequestsOptions {
  /** The buyer's JWKS URL; a function when the buyer starts after the seller (read at each fetch). */
  jwksUrl: string | (() => string);
  /** Operations refused unsigned (default create_media_buy and update_media_buy). */
  requiredFor?: string[];
  /** Default `required`: the body of a spend is bound to its signature. */
  coversContentDigest?: 'required' | 'either' | 'forbidden';
  /** The AdCP 3.2 wire profile (RFC 8941 Base64) instead of 3.0/3.1's unpadded Base64URL. */
  profile?: 'legacy' | 'rfc8941';
}

export interface SignatureRecord {
  at: number;
  operation?: string;
  outcome: 'verified' | 'unsigned' | 'refused';
  keyid?: string;
  nonce?: string;
  code?: string;
  idempotency_key?: string;
}

export interface SignatureHooks {
  /** What the seller made of each POST it saw, oldest first (copies). */
  records(): SignatureRecord[];
  /** How often it fetched the buyer's JWKS. */
  jwksFetches(): number;
}

const MAX_RECORDS = 1_000;

export class SignedRequests {
  readonly capability: VerifierCapability;
  private readonly config: VerifierConfig;
  private readonly jwks: BuyerJwks;
  private readonly seen: SignatureRecord[] = [];

  constructor(opts: SignedRequestsOptions) {
    const required = opts.requiredFor ?? ['create_media_buy', 'update_media_buy'];
    this.capability = {
      supported: true,
      covers_content_digest: opts.coversContentDigest ?? 'required',
      required_for: required,
      warn_for: [],
      // Every required operation is also supported (the schema's x-adcp-validation); creatives may be signed.
      supported_for: [...new Set([...required, 'sync_creatives'])],
    };
    const url = opts.jwksUrl;
    this.jwks = new BuyerJwks(typeof url === 'string' ? () => url : url);
    this.config = {
      capability: this.capability,
      profile: opts.profile ?? 'legacy',
      jwks: this.jwks,
      replay: new InMemoryReplayStore(),
      revocation: new InMemoryRevocationStore(),
      now: () => Math.floor(Date.now() / 1000),
    };
  }

  /** The `request_signing` block of get_adcp_capabilities. */
  get declaration(): Record<string, unknown> {
    return { ...this.capability };
  }

  /**
   * Checks one request before it is handled; false when the answer (401, 413) was sent.
   * The body read here is kept for the handler (http.ts `keepBody`; the A2A router reads
   * `req.body`).
   */
  async admit(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (req.method !== 'POST') return true;
    const raw = await readBody(req);
    if (raw === undefined) {
      sendJson(res, 413, { error: 'body too large' });
      return false;
    }
    keepBody(req, raw);
    const id = requestIdentity(raw, req.url ?? '/');
    if (id.parsed !== undefined) (req as IncomingMessage & { body?: unknown }).body = id.parsed;
    const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
    const verdict = await verifySignedRequest({ method: 'POST', url, headers: req.headers, body: raw }, this.config);
    const key = idempotencyKey(id.parsed);
    this.record({
      at: Date.now(),
      ...(id.operation && { operation: id.operation }),
      outcome: !verdict.ok ? 'refused' : verdict.status,
      ...(verdict.ok && verdict.status === 'verified' && { keyid: verdict.keyid, nonce: verdict.nonce }),
      ...(!verdict.ok && { code: verdict.code }),
      ...(key && { idempotency_key: key }),
    });
    if (verdict.ok) return true;
    res.setHeader('www-authenticate', `Signature error="${verdict.code}"`);
    sendJson(res, 401, { error: verdict.code, message: verdict.message });
    return false;
  }

  hooks(): SignatureHooks {
    return { records: () => structuredClone(this.seen), jwksFetches: () => this.jwks.fetches };
  }

  private record(r: SignatureRecord): void {
    this.seen.push(r);
    if (this.seen.length > MAX_RECORDS) this.seen.shift();
  }
}

/** The idempotency_key of an MCP tool call's arguments or an A2A invocation's input. */
function idempotencyKey(parsed: unknown): string | undefined {
  const msg = parsed as { params?: { arguments?: { idempotency_key?: unknown }; message?: { parts?: Array<{ data?: { input?: { idempotency_key?: unknown } } }> } } } | undefined;
  const fromMcp = msg?.params?.arguments?.idempotency_key;
  if (typeof fromMcp === 'string') return fromMcp;
  const fromA2a = msg?.params?.message?.parts?.find((p) => p?.data?.input)?.data?.input?.idempotency_key;
  return typeof fromA2a === 'string' ? fromA2a : undefined;
}
