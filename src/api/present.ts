/**
 * Turns stored rows into the JSON of README.md, Using it. Secrets never pass through here.
 * Operations and events are presented by the pure functions in src/domain/operation-json.ts,
 * which notifications use too, so the API and the notification bodies never disagree.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { presentOperation, SUMMARY_FIELD_MAX_BYTES, type EventJsonSource, type OperationJson, type OperationJsonSource } from '../domain/operation-json.js';
import type { CancelOutcome } from '../engine/cancel-operation.js';
import { JsonText } from '../domain/json-text.js';
import type { AgentRow } from '../store/index.js';
import { sellerRegistration } from '../domain/governance-sync.js';

export { presentEvent, presentOperation } from '../domain/operation-json.js';
export { JsonText } from '../domain/json-text.js';

/**
 * The operation's JSON for an API answer. A large result is spliced in as stored (our
 * own serialisation of the agent's reply) rather than parsed and serialised again: for a
 * reply of megabytes those are two more passes, each a long task of the event loop.
 */
export function operationAnswer(o: OperationJsonSource, events?: EventJsonSource[]): OperationJson | JsonText {
  const stored = o.result;
  if (stored === null || stored.length <= SUMMARY_FIELD_MAX_BYTES) return presentOperation(o, events);
  // A placeholder no agent can have written (a NUL and a fresh UUID), then the stored text in its place.
  const placeholder = `\u0000result-${randomUUID()}`;
  const text = JSON.stringify(presentOperation({ ...o, result: JSON.stringify(placeholder) }, events));
  const at = text.indexOf(JSON.stringify(placeholder));
  return new JsonText([text.slice(0, at), stored, text.slice(at + JSON.stringify(placeholder).length)]);
}

/** Answers larger than this are sent in slices (sendBody). */
const SLICED_ANSWER_CHARS = 1024 * 1024;
const SLICE_CHARS = 256 * 1024;

/**
 * Sends a body that may be JsonText. A large one goes as a stream of slices, each
 * encoded when the socket asks for more, so that sending megabytes is many short
 * tasks of the event loop rather than one long one.
 */
export function sendBody(reply: FastifyReply, statusCode: number, body: unknown): FastifyReply {
  reply.code(statusCode);
  if (!(body instanceof JsonText)) return reply.send(body);
  reply.type('application/json; charset=utf-8');
  // One slice at a time (highWaterMark 1): each is encoded when the socket has room for it.
  return reply.send(body.length > SLICED_ANSWER_CHARS ? Readable.from(slices(body.parts), { highWaterMark: 1 }) : body.text);
}

function* slices(parts: string[]): Generator<Buffer> {
  for (const text of parts) yield* slicesOf(text);
}

function* slicesOf(text: string): Generator<Buffer> {
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + SLICE_CHARS, text.length);
    // A surrogate pair is never split: both halves go in the same slice.
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield Buffer.from(text.slice(at, end), 'utf8');
    at = end;
  }
}

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
    // What it declared (get_adcp_capabilities), null when nothing we could take; and the version we speak with it.
    capabilities: json(a.capabilities ?? null),
    capabilities_error: a.capabilities_error ?? null,
    adcp_version: a.adcp_version ?? '3.0',
    // A governance agent: whether sellers can be told of it (sync_governance), never the credentials.
    ...(a.role === 'governance' ? { seller_credentials_set: Boolean(a.seller_credentials_enc), seller_registration: sellerRegistration(a) } : {}),
    created_at: iso(a.created_at),
  };
}

/** A cancel's answer: the operation, and the seller-side cancel (`update_media_buy`) when one was started. */
export function presentCancel(outcome: CancelOutcome) {
  const body = presentOperation(outcome.operation);
  return outcome.sellerCancel ? { ...body, seller_cancel: presentOperation(outcome.sellerCancel) } : body;
}
