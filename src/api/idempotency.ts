/**
 * The `Idempotency-Key` header on POST: the same key with the same body returns
 * the first answer; with a different body, 409. A key is reserved before the work
 * runs, so two concurrent requests under one key cannot both do it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../store/index.js';
import { ApiError } from './errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Keyed digest of a request (SecretBox.digest), set by buildApi. */
    requestDigest(text: string): string;
  }
}

export interface Answer {
  statusCode: number;
  body: unknown;
}

/** Seals a stored answer that carries a secret (a new subscription's signing secret), so none is kept in clear. */
export interface StoredAnswerSeal {
  seal(text: string): string;
  open(sealed: string): string;
}

export async function idempotent(store: Store, req: FastifyRequest, reply: FastifyReply, tenantId: string, work: () => Promise<Answer>, sealStored?: StoredAnswerSeal) {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return send(reply, await work());
  if (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new ApiError(400, 'invalid_idempotency_key', 'Idempotency-Key must be 1-255 visible ASCII characters');
  }
  // Keyed, not a bare SHA-256: the body may carry a secret (an agent's token), and an
  // unkeyed hash of it could be tested against guesses by anyone holding the database.
  const hash = req.server.requestDigest(`${req.method} ${req.routeOptions.url}\n${JSON.stringify(req.params)}\n${JSON.stringify(req.body ?? null)}`);
  const reservation = await store.idempotency.reserve(tenantId, key, hash);
  switch (reservation.kind) {
    case 'replay':
      return reply
        .code(reservation.statusCode)
        .header('Idempotent-Replayed', 'true')
        .type('application/json')
        .send(sealStored ? sealStored.open(reservation.body) : reservation.body);
    case 'mismatch':
      throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request');
    case 'in_progress':
      // A reservation older than any request can take was left by a process that died
      // mid-request. The work behind every POST is itself idempotent (operations are keyed
      // by the derived AdCP key), so running it again reaches the same result.
      if (!reservation.abandoned) {
        throw new ApiError(409, 'idempotency_key_in_progress', 'a request with this Idempotency-Key is still being processed');
      }
  }
  let answer: Answer;
  try {
    answer = await work();
  } catch (err) {
    // Errors are not cached: the client may fix the request and retry under the same key.
    await store.idempotency.release(tenantId, key);
    throw err;
  }
  const stored = JSON.stringify(answer.body);
  await store.idempotency.complete(tenantId, key, answer.statusCode, sealStored ? sealStored.seal(stored) : stored);
  return send(reply, answer);
}

function send(reply: FastifyReply, answer: Answer) {
  return reply.code(answer.statusCode).send(answer.body);
}
