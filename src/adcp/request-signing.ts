/**
 * Signing one outbound request under the AdCP RFC 9421 request-signing profile
 * (security.mdx, "Signed Requests"): covered components `@method`, `@target-uri`,
 * `@authority`, `content-type` (with a body) and, when asked, `content-digest`, in that
 * order; `created`, `expires` (created + 300 s at most), a fresh 128-bit `nonce`, `keyid`,
 * `alg="ed25519"`, `tag="adcp/request-signing/v1"`; label `sig1`.
 *
 * Two wire profiles for the binary values (`Signature`, `Content-Digest`): AdCP 3.0/3.1
 * request signing encodes them as unpadded Base64URL (the legacy override, and what
 * the conformance vectors of those releases hold); AdCP 3.2 uses RFC 8941 sf-binary,
 * standard padded Base64, and covers `content-digest` on every request with a body.
 * The signer picks by the version we speak with the seller (dialect.ts), never guesses.
 *
 * Built on node:crypto alone: the signature base is a few lines of text, and the SDK's
 * signing module takes seconds to load (sdk-signing.ts) while its canonicalization
 * differs from the spec's vectors (target-uri.ts). test/unit/request-signing-vectors
 * checks every positive vector's `expected_signature_base` and signature bytes.
 */
import { createHash, randomBytes, sign, type KeyObject } from 'node:crypto';
import { canonicalTarget } from './target-uri.js';

export const REQUEST_SIGNING_TAG = 'adcp/request-signing/v1';
/** The profile's longest validity (expires − created). */
export const MAX_WINDOW_SECONDS = 300;

export type SigningProfile = 'legacy' | 'rfc8941';

/** Our request-signing key: an Ed25519 private key and the `kid` it is published under. */
export interface RequestSigningKey {
  kid: string;
  privateKey: KeyObject;
}

export interface OutboundRequest {
  method: string;
  /** The URL the request is sent to, as the HTTP client will send it. */
  url: string;
  /** The value of the Content-Type header sent (required with a body). */
  contentType?: string;
  /** The exact body bytes sent, as text (UTF-8). */
  body?: string;
}

export interface SignatureParams {
  created: number;
  expires: number;
  nonce: string;
  keyid: string;
  alg: string;
  tag: string;
}

export interface SignOptions {
  profile: SigningProfile;
  coverContentDigest: boolean;
  /** Epoch seconds. */
  now: number;
  /** Validity in seconds (default and most 300). */
  windowSeconds?: number;
  /** Only for reproducing vectors: a fresh random nonce otherwise. */
  nonce?: string;
  /** Only for reproducing vectors (ES256 keyids, other algorithms); the signer itself signs Ed25519. */
  keyid?: string;
  alg?: string;
}

export interface SignedHeaders {
  /** Headers to add to the request: Signature-Input, Signature and, when covered, Content-Digest. */
  headers: Record<string, string>;
  /** The signature base that was signed (tests compare it with the vectors). */
  base: string;
  params: SignatureParams;
}

function encodeBinary(bytes: Buffer, profile: SigningProfile): string {
  return profile === 'legacy' ? bytes.toString('base64url') : bytes.toString('base64');
}

/** RFC 9530 Content-Digest of the body, sha-256, in the profile's encoding. */
export function contentDigest(body: string, profile: SigningProfile): string {
  return `sha-256=:${encodeBinary(createHash('sha256').update(body, 'utf8').digest(), profile)}:`;
}

/** A fresh nonce: 16 random bytes, unpadded Base64URL (the profile's minimum entropy). */
export function freshNonce(): string {
  return randomBytes(16).toString('base64url');
}

/** The `@signature-params` value (also the `Signature-Input` member's value). */
export function signatureParamsValue(components: readonly string[], p: SignatureParams): string {
  const list = components.map((c) => `"${c}"`).join(' ');
  return `(${list});created=${p.created};expires=${p.expires};nonce="${p.nonce}";keyid="${p.keyid}";alg="${p.alg}";tag="${p.tag}"`;
}

/**
 * The RFC 9421 §2.5 signature base: one line per covered component in order, then
 * `@signature-params`; lines joined by LF, no trailing newline.
 */
export function signatureBase(request: OutboundRequest, components: readonly string[], params: SignatureParams, digest?: string): string {
  const target = canonicalTarget(request.url);
  const lines = components.map((component) => {
    switch (component) {
      case '@method':
        return `"@method": ${request.method.toUpperCase()}`;
      case '@target-uri':
        return `"@target-uri": ${target.targetUri}`;
      case '@authority':
        return `"@authority": ${target.authority}`;
      case 'content-type':
        return `"content-type": ${(request.contentType ?? '').trim()}`;
      case 'content-digest':
        return `"content-digest": ${digest ?? ''}`;
      default:
        throw new Error(`component ${component} is not signed by this profile`);
    }
  });
  lines.push(`"@signature-params": ${signatureParamsValue(components, params)}`);
  return lines.join('\n');
}

/** The components this profile covers for `request`. */
export function coveredComponents(request: OutboundRequest, coverContentDigest: boolean): string[] {
  const hasBody = (request.body ?? '').length > 0;
  const components = ['@method', '@target-uri', '@authority'];
  if (hasBody) components.push('content-type');
  if (hasBody && coverContentDigest) components.push('content-digest');
  return components;
}

/** Everything but the signature bytes: the base to sign, the params and the digest header. */
export function prepareSignature(request: OutboundRequest, keyid: string, opts: SignOptions): { base: string; params: SignatureParams; components: string[]; digest?: string } {
  const window = Math.min(opts.windowSeconds ?? MAX_WINDOW_SECONDS, MAX_WINDOW_SECONDS);
  const params: SignatureParams = {
    created: opts.now,
    expires: opts.now + window,
    nonce: opts.nonce ?? freshNonce(),
    keyid: opts.keyid ?? keyid,
    alg: opts.alg ?? 'ed25519',
    tag: REQUEST_SIGNING_TAG,
  };
  const components = coveredComponents(request, opts.coverContentDigest);
  const digest = components.includes('content-digest') ? contentDigest(request.body ?? '', opts.profile) : undefined;
  return { base: signatureBase(request, components, params, digest), params, components, ...(digest !== undefined && { digest }) };
}

/** Signs `request` with `key`: the headers to send with it. */
export function signRequest(request: OutboundRequest, key: RequestSigningKey, opts: SignOptions): SignedHeaders {
  const prepared = prepareSignature(request, key.kid, opts);
  const signature = sign(null, Buffer.from(prepared.base, 'utf8'), key.privateKey);
  const headers: Record<string, string> = {
    'Signature-Input': `sig1=${signatureParamsValue(prepared.components, prepared.params)}`,
    Signature: `sig1=:${encodeBinary(signature, opts.profile)}:`,
  };
  if (prepared.digest !== undefined) headers['Content-Digest'] = prepared.digest;
  return { headers, base: prepared.base, params: prepared.params };
}
