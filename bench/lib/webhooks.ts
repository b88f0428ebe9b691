/**
 * Building signed webhook deliveries for seeded operations: HMAC-SHA256 (legacy)
 * and RFC 9421 (Ed25519, signed with the SDK's signWebhook).
 */
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { signWebhook, type SignerKey } from '@adcp/sdk/signing/client';

export interface SeededOp {
  id: string;
  token: string;
  taskId: string;
  /** HMAC secret (plaintext), for hmac mode. */
  secret?: string;
}

export interface DeliverySpec {
  op: SeededOp;
  status: string;
  /** Sender timestamp, epoch ms (must grow per operation, or non-terminal reports are stale). */
  at: number;
  key: string;
}

export function envelope(d: DeliverySpec): string {
  const body: Record<string, unknown> = {
    idempotency_key: d.key,
    task_id: d.op.taskId,
    task_type: 'create_media_buy',
    status: d.status,
    timestamp: new Date(d.at).toISOString(),
    operation_id: d.op.id,
    protocol: 'media-buy',
  };
  // As a 3.0 seller's create reply does, the result states the buy's status: the new buy's first status read comes on
  // the tracking interval (as it would in production), not at once against the bench's agent address, which is not a seller.
  if (d.status === 'completed') body.result = { media_buy_id: `mb_${d.op.taskId}`, status: 'active', packages: [{ package_id: 'pkg_1', status: 'active' }] };
  else body.message = `progress ${d.key.slice(-6)}`;
  return JSON.stringify(body);
}

export function hmacHeaders(secret: string, body: string, nowSec = Math.floor(Date.now() / 1000)): Record<string, string> {
  const ts = String(nowSec);
  const mac = createHmac('sha256', secret).update(`${ts}.`, 'utf8').update(body).digest('hex');
  return { 'content-type': 'application/json', 'x-adcp-signature': `sha256=${mac}`, 'x-adcp-timestamp': ts };
}

export interface Rfc9421Identity {
  signerKey: SignerKey;
  publicJwks: { keys: Array<Record<string, unknown>> };
}

export function mintRfc9421Identity(): Rfc9421Identity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const kid = `bench-${randomBytes(6).toString('hex')}`;
  const pub = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string };
  const priv = privateKey.export({ format: 'jwk' }) as { d: string };
  return {
    signerKey: { keyid: kid, alg: 'ed25519', privateKey: { kid, kty: pub.kty, crv: pub.crv, x: pub.x, d: priv.d } },
    publicJwks: { keys: [{ kid, kty: pub.kty, crv: pub.crv, x: pub.x, alg: 'EdDSA', use: 'sig', key_ops: ['verify'], adcp_use: 'webhook-signing' }] },
  };
}

export function rfc9421Headers(identity: Rfc9421Identity, url: string, body: string): Record<string, string> {
  const signed = signWebhook({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body }, identity.signerKey);
  return { 'content-type': 'application/json', ...signed.headers };
}

/**
 * The delivery plan: operations in blocks of `block`; within a block each round
 * goes to every operation before the next round, so two deliveries for one
 * operation are `block` requests apart (never in flight together) and any prefix
 * of the plan has the same status mix. Rounds: working, working (same status,
 * fresh progress), submitted, working, completed → 80 % non-terminal, 20 % terminal.
 */
export const ROUNDS = ['working', 'working', 'submitted', 'working', 'completed'];

export function plan(ops: SeededOp[], block = 200, baseAt = Date.now() - 60_000): DeliverySpec[] {
  const out: DeliverySpec[] = [];
  for (let b = 0; b < ops.length; b += block) {
    const group = ops.slice(b, b + block);
    ROUNDS.forEach((status, r) => {
      for (const op of group) {
        out.push({ op, status, at: baseAt + r * 1000, key: `bench-${op.id}-r${r}-${randomBytes(4).toString('hex')}` });
      }
    });
  }
  return out;
}
