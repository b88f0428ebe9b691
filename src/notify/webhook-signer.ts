/**
 * Standard Webhooks 1.0 signing for outbound notifications, with the reference
 * library (`standardwebhooks`), so what we send is what subscribers' verifiers
 * expect: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one entry per
 * active secret, space-separated (so a secret can be rotated without downtime).
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** `whsec_` + base64 of 32 random bytes (the spec asks for at least 24). */
export function newSubscriptionSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Headers for one attempt: the id is the notification's (the same on every
 * retry, so receivers can drop duplicates), the timestamp this attempt's.
 */
export function signWebhook(id: string, at: Date, body: string, secrets: readonly string[]): SignedHeaders {
  if (secrets.length === 0) throw new Error('a subscription needs at least one active secret to sign with');
  // A `.` in the id would let a signature for one (id, timestamp) pair pass for another.
  if (id.includes('.')) throw new Error('webhook id must not contain "."');
  const signatures = secrets.map((s) => new Webhook(s).sign(id, at, body));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
