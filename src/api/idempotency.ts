/**
 * The `Idempotency-Key` header on POST: the same key with the same body returns
 * the first answer (marked `Idempotent-Replayed: true`); with a different body, 409.
 * The rules live in src/engine/request-idempotency.ts, shared with the MCP tools'
 * `idempotency_key`; this file only reads the header and writes the reply.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyReservation } from '../store/idempotency-repo.js';
import { answerOnce, checkIdempotencyKey, type AnswerOnceOptions, type KeyedAnswer, type StoredAnswerSeal } from '../engine/request-idempotency.js';

import { sendBody } from './present.js';

export type { StoredAnswerSeal } from '../engine/request-idempotency.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Keyed digest of a request (SecretBox.digest), set by buildApi. */
    requestDigest(text: string): string;
  }
}

export type Answer = KeyedAnswer;
export type IdempotentOptions = AnswerOnceOptions;

export async function idempotent(
  store: Parameters<typeof answerOnce>[0],
  req: FastifyRequest,
  reply: FastifyReply,
  tenantId: string,
  work: (reservation?: KeyReservation) => Promise<Answer>,
  options: StoredAnswerSeal | IdempotentOptions = {},
) {
  const opts: IdempotentOptions = 'seal' in options ? { sealStored: options } : options;
  const header = req.headers['idempotency-key'];
  if (header === undefined) return send(reply, await work());
  const key = checkIdempotencyKey(header);
  // Keyed, not a bare SHA-256: the body may carry a secret (an agent's token), and an
  // unkeyed hash of it could be tested against guesses by anyone holding the database.
  const hash = req.server.requestDigest(`${req.method} ${req.routeOptions.url}\n${JSON.stringify(req.params)}\n${JSON.stringify(req.body ?? null)}`);
  const result = await answerOnce(store, { tenantId, key, hash }, work, opts);
  if (result.replayed) reply.header('Idempotent-Replayed', 'true');
  return send(reply, result);
}

function send(reply: FastifyReply, answer: Answer) {
  return sendBody(reply, answer.statusCode, answer.body);
}
