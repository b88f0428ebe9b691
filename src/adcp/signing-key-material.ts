/**
 * Our request-signing key as AdCP publishes it (security.mdx, "Agent key publication"):
 * an Ed25519 key whose public JWK is exactly `{kty: "OKP", crv: "Ed25519", x, kid,
 * alg: "EdDSA", use: "sig", key_ops: ["verify"], adcp_use: "request-signing"}`.
 *
 * The `kid` is the key's RFC 7638 thumbprint, so it is the same wherever the key is
 * loaded: every instance reading one key file names it alike, and a kid can never be
 * reused by another key.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';

/** A public JWK as we publish it; nothing private ever has this type. */
export interface PublicSigningJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
  key_ops: ['verify'];
  adcp_use: 'request-signing';
}

export interface SigningKeyMaterial {
  kid: string;
  privateKey: KeyObject;
  publicJwk: PublicSigningJwk;
}

/** RFC 7638 thumbprint of an OKP key: SHA-256 over its required members in lexicographic order. */
export function okpThumbprint(x: string): string {
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
}

/** The material for an Ed25519 private key (throws for any other kind of key). */
export function materialFromPrivateKey(privateKey: KeyObject): SigningKeyMaterial {
  if (privateKey.type !== 'private') throw new Error(`holds a ${privateKey.type} key, not a private key`);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`holds an ${privateKey.asymmetricKeyType ?? 'unknown'} key, not an Ed25519 key`);
  const { x } = createPublicKey(privateKey).export({ format: 'jwk' }) as { x?: string };
  if (!x) throw new Error('its public key could not be derived');
  const kid = okpThumbprint(x);
  return { kid, privateKey, publicJwk: publicJwk(x, kid) };
}

export function publicJwk(x: string, kid: string): PublicSigningJwk {
  return { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig', key_ops: ['verify'], adcp_use: 'request-signing' };
}

/** A new Ed25519 key. */
export function generateSigningKey(): SigningKeyMaterial {
  return materialFromPrivateKey(generateKeyPairSync('ed25519').privateKey);
}

/** The private key as JWK text, to be sealed (SecretBox) before it is stored. */
export function privateJwkText(material: SigningKeyMaterial): string {
  return JSON.stringify(material.privateKey.export({ format: 'jwk' }));
}

/** The material back from its private JWK text (as privateJwkText wrote it). */
export function materialFromPrivateJwk(text: string): SigningKeyMaterial {
  return materialFromPrivateKey(createPrivateKey({ key: JSON.parse(text) as JsonWebKey, format: 'jwk' }));
}

/**
 * The material from a key file's text: a PKCS#8 PEM private key (as `openssl genpkey
 * -algorithm ed25519` writes it) or a private JWK (`{"kty":"OKP","crv":"Ed25519","x",
 * "d"}`). Throws with what is wrong, never with the key's content.
 */
export function materialFromKeyFile(text: string): SigningKeyMaterial {
  const trimmed = text.trim();
  if (trimmed === '') throw new Error('is empty');
  let key: KeyObject;
  if (trimmed.startsWith('{')) {
    let jwk: Record<string, unknown>;
    try {
      jwk = JSON.parse(trimmed) as Record<string, unknown>;
    } catch {
      throw new Error('is neither a PEM private key nor JSON');
    }
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') throw new Error(`holds a JWK of kty ${String(jwk.kty)} / crv ${String(jwk.crv)}, not an Ed25519 key (OKP / Ed25519)`);
    if (typeof jwk.d !== 'string') throw new Error('holds a public JWK: the file must hold the private key ("d")');
    try {
      key = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
    } catch {
      throw new Error('holds a JWK that is not a valid Ed25519 private key');
    }
  } else if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(trimmed)) {
    try {
      key = createPrivateKey({ key: trimmed, format: 'pem' });
    } catch {
      throw new Error('holds a PEM private key that cannot be read (encrypted, or damaged)');
    }
  } else if (/-----BEGIN [A-Z ]*PUBLIC KEY-----/.test(trimmed)) {
    throw new Error('holds a public key: the file must hold the private key');
  } else {
    throw new Error('is neither a PEM private key nor a JWK');
  }
  return materialFromPrivateKey(key);
}
