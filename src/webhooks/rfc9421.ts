/**
 * RFC 9421 webhook authentication, receiver side: the one entry point the
 * route calls for agents registered without legacy `authentication`.
 * The signature work is done by src/adcp/webhook-signature.ts (the SDK
 * wrapper); here we only add the mode-mismatch rule, which is about our
 * registration, not about RFC 9421.
 */
import {
  verifyRfc9421Webhook,
  type Rfc9421Result,
  type VerifyDeps,
  type WebhookRequest,
} from '../adcp/webhook-signature.js';
import { isModeMismatch } from './mode.js';

export type { Rfc9421Result, VerifyDeps, WebhookRequest } from '../adcp/webhook-signature.js';

export async function authenticateRfc9421(request: WebhookRequest, deps: VerifyDeps): Promise<Rfc9421Result> {
  if (isModeMismatch(request.headers, 'rfc9421')) {
    // Registered for RFC 9421 but the seller used HMAC or Bearer: never fall
    // back to the legacy scheme; say so distinctly so an operator is alerted.
    return {
      ok: false,
      code: 'webhook_mode_mismatch',
      message: 'This webhook is registered for RFC 9421 signatures but arrived with legacy HMAC/Bearer credentials.',
    };
  }
  return verifyRfc9421Webhook(request, deps);
}
