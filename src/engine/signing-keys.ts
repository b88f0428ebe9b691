/**
 * Our request-signing keys (README, Signed requests): the key every signed request
 * to a seller is signed with, and the public keys we publish (GET /.well-known/jwks.json).
 *
 * - At first start a key is made, its private half sealed under ADCP_ORCH_SECRET_KEY and
 *   stored (table signing_keys), so every instance on the database signs with the same one.
 *   With ADCP_ORCH_SIGNING_KEY_FILE the key comes from that file instead and never enters
 *   the database; only its public half is stored, to be published.
 * - `rotate` adds a new key, published at once and signing from `activates_at` (now plus
 *   ADCP_ORCH_SIGNING_KEY_LEAD_MS); the keys it replaces stay published until the grace
 *   period after that (ADCP_ORCH_SIGNING_KEY_GRACE_MS), then are dropped (`prune`). Their
 *   private halves are dropped as soon as they no longer sign.
 * - Instances read the table again every REFRESH_MS, so one rotated elsewhere (another
 *   instance, the CLI) signs here once it activates: with the default lead, every instance
 *   already holds it then, and they switch together.
 *
 * The private key is held only as a KeyObject in memory; it is never logged or returned.
 */
import type { Logger } from 'pino';
import type { OutboundSigner } from '../adcp/signing-fetch.js';
import type { RequestSigningKey } from '../adcp/request-signing.js';
import { generateSigningKey, materialFromPrivateJwk, privateJwkText, type PublicSigningJwk, type SigningKeyMaterial } from '../adcp/signing-key-material.js';
import type { SecretBox } from '../store/secret-box.js';
import { SigningKeyConflictError, type SigningKeyRow, type SigningKeysRepo } from '../store/signing-keys-repo.js';
import type { Clock } from './clock.js';

/** How often the key table is read again for rotations made elsewhere. */
export const REFRESH_MS = 10_000;

export interface SigningKeysOptions {
  repo: SigningKeysRepo;
  secrets: SecretBox;
  clock: Clock;
  log: Logger;
  /** The key from ADCP_ORCH_SIGNING_KEY_FILE, if one is configured. */
  keyFile?: SigningKeyMaterial;
  graceMs: number;
  leadMs: number;
}

export type KeyState = 'signing' | 'next' | 'retired';

export interface SigningKeyInfo {
  kid: string;
  source: 'generated' | 'file';
  state: KeyState;
  created_at: string;
  /** When it signs (or signed) from. */
  activates_at: string;
  /** When it leaves our JWKS; null while it is current. */
  published_until: string | null;
}

export class SigningKeyFileError extends Error {}

export class SigningKeys implements OutboundSigner {
  enabled = true;
  private rows: SigningKeyRow[] = [];
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private readonly opened = new Map<string, RequestSigningKey>();

  constructor(private readonly opts: SigningKeysOptions) {}

  nowSeconds(): number {
    return Math.floor(this.opts.clock.now() / 1000);
  }

  /** Makes sure there is a key to sign with (the file's, or one made now), then reads the table. */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      this.rows = await this.opts.repo.all();
      const now = this.opts.clock.now();
      try {
        const file = this.opts.keyFile;
        if (file) {
          const known = this.rows.find((r) => r.kid === file.kid);
          if (known?.publish_until != null) {
            throw new SigningKeyFileError(
              `ADCP_ORCH_SIGNING_KEY_FILE holds key ${file.kid}, which a newer key replaced (it leaves our JWKS at ${new Date(known.publish_until).toISOString()}): point it at the current key`,
            );
          }
          if (!known) await this.add(file, 'file', now);
        } else if (!this.rows.some((r) => r.source === 'generated' && r.private_jwk_enc !== null && r.publish_until === null)) {
          await this.add(generateSigningKey(), 'generated', now);
        }
        break;
      } catch (err) {
        // Another instance made the first key (or published the same file) at the same moment: look again.
        if (!(err instanceof SigningKeyConflictError) || attempt >= 3) throw err;
      }
    }
    await this.reload();
  }

  /** OutboundSigner: the key that signs now. */
  async signingKey(): Promise<RequestSigningKey | undefined> {
    if (this.opts.keyFile) return { kid: this.opts.keyFile.kid, privateKey: this.opts.keyFile.privateKey };
    await this.fresh();
    const row = this.current(this.opts.clock.now());
    if (!row?.private_jwk_enc) return undefined;
    let key = this.opened.get(row.kid);
    if (!key) {
      const material = materialFromPrivateJwk(this.opts.secrets.open(row.private_jwk_enc));
      key = { kid: material.kid, privateKey: material.privateKey };
      this.opened.set(row.kid, key);
    }
    return key;
  }

  /** The public keys we publish now: the current one, the next one, and replaced ones within their grace. */
  async jwks(): Promise<{ keys: PublicSigningJwk[] }> {
    await this.fresh();
    const now = this.opts.clock.now();
    return { keys: this.rows.filter((r) => r.publish_until === null || r.publish_until > now).map((r) => publicOnly(r.public_jwk)) };
  }

  /** A new generated key: published now, signing after `leadMs`; the ones it replaces published for the grace after that. */
  async rotate(leadMs = this.opts.leadMs): Promise<{ key: SigningKeyInfo; replaced: SigningKeyInfo[] }> {
    await this.reload();
    if (this.opts.keyFile || this.rows[0]?.source === 'file') {
      throw new SigningKeyFileError(
        'the signing key comes from ADCP_ORCH_SIGNING_KEY_FILE: rotate it by pointing that file at a new key and restarting (the old public key stays published for ADCP_ORCH_SIGNING_KEY_GRACE_MS)',
      );
    }
    const now = this.opts.clock.now();
    const replacing = this.rows.filter((r) => r.publish_until === null).map((r) => r.kid);
    const row = await this.add(generateSigningKey(), 'generated', now, now + leadMs);
    await this.reload();
    const infos = await this.list();
    return { key: infos.find((k) => k.kid === row.kid)!, replaced: infos.filter((k) => replacing.includes(k.kid)) };
  }

  /** Every key we hold, newest first; never a private member. */
  async list(): Promise<SigningKeyInfo[]> {
    await this.reload();
    const now = this.opts.clock.now();
    const signing = this.opts.keyFile?.kid ?? this.current(now)?.kid;
    return this.rows.map((r) => ({
      kid: r.kid,
      source: r.source,
      state: r.kid === signing ? 'signing' : r.activates_at > now ? 'next' : 'retired',
      created_at: new Date(r.created_at).toISOString(),
      activates_at: new Date(r.activates_at).toISOString(),
      published_until: r.publish_until === null ? null : new Date(r.publish_until).toISOString(),
    }));
  }

  /** Drops keys past their grace, and the private halves of keys that no longer sign (maintenance). */
  async prune(): Promise<number> {
    const now = this.opts.clock.now();
    const dropped = await this.opts.repo.deleteExpired(now);
    await this.reload();
    const signing = this.current(now);
    if (signing) {
      const stale = this.rows.filter((r) => r.private_jwk_enc !== null && r.generation < signing.generation).map((r) => r.kid);
      await this.opts.repo.forgetPrivate(stale);
      for (const kid of stale) this.opened.delete(kid);
      if (stale.length > 0) await this.reload();
    }
    return dropped;
  }

  /** The newest key that has activated (its private half may be gone once replaced). */
  private current(now: number): SigningKeyRow | undefined {
    return this.rows.find((r) => r.activates_at <= now && (r.publish_until === null || r.publish_until > now));
  }

  private async add(material: SigningKeyMaterial, source: 'generated' | 'file', now: number, activatesAt = now): Promise<SigningKeyRow> {
    const replacedUntil = this.rows.length > 0 ? activatesAt + this.opts.graceMs : null;
    const row = await this.opts.repo.addNext(
      {
        kid: material.kid,
        public_jwk: JSON.stringify(material.publicJwk),
        // A file's key stays in the file: the database only publishes it.
        private_jwk_enc: source === 'generated' ? this.opts.secrets.seal(privateJwkText(material)) : null,
        source,
        created_at: now,
        activates_at: activatesAt,
        publish_until: null,
      },
      replacedUntil,
      this.rows[0]?.generation ?? 0,
    );
    this.opts.log.info({ kid: row.kid, source, activates_at: new Date(activatesAt).toISOString() }, 'request-signing key added');
    return row;
  }

  private async fresh(): Promise<void> {
    if (this.opts.clock.now() - this.loadedAt < REFRESH_MS) return;
    await this.reload().catch((err: unknown) => {
      // The database away: sign with what we hold; it is read again at the next call.
      if (this.rows.length === 0) throw err;
      this.opts.log.warn({ err }, 'could not read the request-signing keys; using the ones held');
    });
  }

  private reload(): Promise<void> {
    this.loading ??= this.opts.repo
      .all()
      .then((rows) => {
        this.rows = rows;
        this.loadedAt = this.opts.clock.now();
      })
      .finally(() => (this.loading = undefined));
    return this.loading;
  }
}

/** The stored public JWK with only the members we publish (a stored row never holds more; belt and braces). */
function publicOnly(text: string): PublicSigningJwk {
  const jwk = JSON.parse(text) as PublicSigningJwk;
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid: jwk.kid, alg: jwk.alg, use: jwk.use, key_ops: jwk.key_ops, adcp_use: jwk.adcp_use };
}
