/**
 * Turns stored rows into the JSON of README.md, Using it. Secrets never pass through here.
 * Operations and events are presented by the pure functions in src/domain/operation-json.ts,
 * which notifications use too, so the API and the notification bodies never disagree.
 */
import { presentOperation } from '../domain/operation-json.js';
import type { CancelOutcome } from '../engine/cancel-operation.js';
import type { AgentRow } from '../store/index.js';

export { presentEvent, presentOperation } from '../domain/operation-json.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const json = (text: string | null) => (text === null ? null : JSON.parse(text));

export function presentAgent(a: AgentRow) {
  return {
    id: a.id,
    name: a.name,
    role: a.role,
    url: a.url,
    protocol: a.protocol,
    // Whether a token is set, never the token.
    auth: a.auth_token_enc ? { scheme: 'bearer', token_set: true } : null,
    webhook_signing: json(a.webhook_signing),
    created_at: iso(a.created_at),
  };
}

/** A cancel's answer: the operation, and the seller-side cancel (`update_media_buy`) when one was started. */
export function presentCancel(outcome: CancelOutcome) {
  const body = presentOperation(outcome.operation);
  return outcome.sellerCancel ? { ...body, seller_cancel: presentOperation(outcome.sellerCancel) } : body;
}
