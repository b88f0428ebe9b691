/**
 * The outbound signer as a fetch wrapper, under both transports (mcp-transport.ts,
 * a2a-transport.ts): every HTTP request they make passes here with its exact body,
 * and one the seller's declaration calls for (signing-policy.ts) leaves with
 * `Signature-Input`, `Signature` and, when covered, `Content-Digest` computed over
 * those very bytes. Each request is signed afresh, so a resend (a new HTTP request:
 * a retried send, an MCP session re-opened) carries a new nonce and `created`.
 *
 * Which seller a request goes to is known by the call that makes it, not by the
 * transport (an MCP session outlives calls, and the seller's declaration may change
 * between them): each call runs in `withSellerSigning`, read here.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { signRequest, type RequestSigningKey } from './request-signing.js';
import { signingDecision, type SellerSigning } from './signing-policy.js';

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Where the signer gets its key; the engine's SigningKeys (src/engine/signing-keys.ts) is one. */
export interface OutboundSigner {
  /** The key to sign with now (rotation changes it); undefined when there is none yet. */
  signingKey(): Promise<RequestSigningKey | undefined>;
  /**
   * Test hook: false sends every request unsigned, whatever the seller declared, so a
   * test can show a seller refusing it. Never turned off outside tests.
   */
  enabled: boolean;
  /** Epoch seconds (default: the system clock). */
  nowSeconds?(): number;
}

const sellerScope = new AsyncLocalStorage<SellerSigning | undefined>();

/** Runs `fn` (one call to one seller) with that seller's signing declaration in scope. */
export function withSellerSigning<T>(seller: SellerSigning | undefined, fn: () => T): T {
  return sellerScope.run(seller, fn);
}

/** The seller's signing for the call running now, if any. */
export function currentSellerSigning(): SellerSigning | undefined {
  return sellerScope.getStore();
}

const SIGNATURE_HEADERS = ['signature', 'signature-input', 'content-digest'];

export function signingFetch(base: Fetch, signer: OutboundSigner | undefined): Fetch {
  if (!signer) return base;
  return async (input, init) => {
    const seller = sellerScope.getStore();
    if (!seller || !signer.enabled || typeof init?.body !== 'string' || input instanceof Request) return base(input, init);
    const decision = signingDecision(init.body, seller);
    if (!decision.sign) return base(input, init);
    const key = await signer.signingKey();
    // No key (never the case once serving: one is made at first start): sent unsigned, and a
    // seller that requires a signature says so with its own code.
    if (!key) return base(input, init);
    const headers = new Headers(init.headers);
    for (const name of SIGNATURE_HEADERS) headers.delete(name);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    const now = signer.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
    const signed = signRequest(
      { method: init.method ?? 'GET', url: String(input), contentType: headers.get('content-type') ?? undefined, body: init.body },
      key,
      { profile: seller.profile, coverContentDigest: decision.coverContentDigest, now },
    );
    for (const [name, value] of Object.entries(signed.headers)) headers.set(name, value);
    return base(input, { ...init, headers });
  };
}
