/**
 * Encrypts stored secrets (agent tokens, HMAC webhook secrets) with AES-256-GCM
 * under a key derived from ADCP_ORCH_SECRET_KEY. Output: `v1.<iv>.<tag>.<ciphertext>`
 * in base64url, so a future key rotation can add `v2` beside it.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

export class SecretBox {
  private readonly key: Buffer;
  private readonly digestKey: Buffer;

  constructor(secret: string) {
    if (secret.length < 16) throw new Error('ADCP_ORCH_SECRET_KEY must be at least 16 characters');
    // A fixed-purpose hash turns any passphrase into a 256-bit key; the secret itself
    // is the operator's, so stretching (scrypt) would add start-up cost, not safety.
    this.key = createHash('sha256').update('adcp-orchestrator/secret-box/v1\0').update(secret).digest();
    this.digestKey = createHash('sha256').update('adcp-orchestrator/digest/v1\0').update(secret).digest();
  }

  /**
   * A keyed fingerprint (HMAC-SHA256, hex) of text that may hold a secret, for
   * telling equal texts apart without storing them: unlike a bare SHA-256, it
   * cannot be checked against guesses by someone holding only the database.
   */
  digest(text: string): string {
    return createHmac('sha256', this.digestKey).update(text, 'utf8').digest('hex');
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  /** True for a value in seal()'s format (`v1.<iv>.<tag>.<body>`); a JWS (three parts, starting `ey`) never is. */
  static isSealed(value: string): boolean {
    const parts = value.split('.');
    return parts.length === 4 && parts[0] === 'v1';
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('Unrecognised sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
