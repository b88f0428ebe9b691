/**
 * The `Idempotency-Key` header on POST: the same key with the same body returns
 * the first answer; with a different body, 409. A key is reserved before the work
 * writes anything, so two concurrent requests under one key cannot both do it: in a
 * commit of its own before the work, or (reserveInWork) inside the work's first write,
 * the one that stores the operation, so that both share one commit.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../store/index.js';
import { IdempotencyKeyTaken, type KeyReservation, type Reservation } from '../store/idempotency-repo.js';
import { ApiError } from './errors.js';
import { JsonText, sendBody } from './present.js';

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

export interface IdempotentOptions {
  /** Seals a stored answer that carries a secret. */
  sealStored?: StoredAnswerSeal;
  /**
   * The work reserves the key itself, in the write that stores what it creates
   * (CreateOperationInput.reservation), instead of in a commit of its own before it.
   */
  reserveInWork?: boolean;
}

export async function idempotent(
  store: Store,
  req: FastifyRequest,
  reply: FastifyReply,
  tenantId: string,
  work: (reservation?: KeyReservation) => Promise<Answer>,
  options: StoredAnswerSeal | IdempotentOptions = {},
) {
  const { sealStored, reserveInWork } = 'seal' in options ? { sealStored: options, reserveInWork: false } : options;
  const key = req.headers['idempotency-key'];
  if (key === undefined) return send(reply, await work());
  if (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new ApiError(400, 'invalid_idempotency_key', 'Idempotency-Key must be 1-255 visible ASCII characters');
  }
  // Keyed, not a bare SHA-256: the body may carry a secret (an agent's token), and an
  // unkeyed hash of it could be tested against guesses by anyone holding the database.
  const hash = req.server.requestDigest(`${req.method} ${req.routeOptions.url}\n${JSON.stringify(req.params)}\n${JSON.stringify(req.body ?? null)}`);
  const keyed: Keyed = { store, reply, tenantId, key, hash, work, sealStored };
  if (reserveInWork) {
    const found = await store.idempotency.find(tenantId, key, hash);
    if (!found) return reservedInWork(keyed);
    if (found.kind !== 'in_progress' || !found.abandoned) return answerFor(keyed, found);
  }
  return reservedFirst(keyed);
}

interface Keyed {
  store: Store;
  reply: FastifyReply;
  tenantId: string;
  key: string;
  hash: string;
  work: (reservation?: KeyReservation) => Promise<Answer>;
  sealStored: StoredAnswerSeal | undefined;
}

/** The key's record answers the request without running the work (or refuses it). */
function answerFor({ reply, sealStored }: Keyed, found: Exclude<Reservation, { kind: 'reserved' }>) {
  switch (found.kind) {
    case 'replay':
      return reply
        .code(found.statusCode)
        .header('Idempotent-Replayed', 'true')
        .type('application/json')
        .send(sealStored ? sealStored.open(found.body) : found.body);
    case 'mismatch':
      throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request');
    case 'in_progress':
      throw new ApiError(409, 'idempotency_key_in_progress', 'a request with this Idempotency-Key is still being processed');
  }
}

/** The key reserved in a commit of its own, then the work. */
async function reservedFirst(keyed: Keyed) {
  const { store, tenantId, key, hash } = keyed;
  const reservation = await store.idempotency.reserve(tenantId, key, hash);
  // A reservation older than any request can take was left by a process that died
  // mid-request. The work behind every POST is itself idempotent (operations are keyed
  // by the derived AdCP key), so running it again reaches the same result.
  if (reservation.kind !== 'reserved' && !(reservation.kind === 'in_progress' && reservation.abandoned)) return answerFor(keyed, reservation);
  let answer: Answer;
  try {
    answer = await keyed.work();
  } catch (err) {
    // Errors are not cached: the client may fix the request and retry under the same key.
    await store.idempotency.release(tenantId, key);
    throw err;
  }
  await storeAnswer(keyed, answer);
  return send(keyed.reply, answer);
}

/**
 * Nobody held the key when we looked: the work reserves it in the write that stores
 * what it creates. A request that took the key in between makes that write throw
 * (nothing of ours is left) and we answer as if we had found its reservation.
 */
async function reservedInWork(keyed: Keyed) {
  const { store, tenantId, key, hash } = keyed;
  let ours = false;
  const reservation: KeyReservation = {
    reserveIn: async (trx) => {
      if (!(await store.idempotency.reserveIn(trx, tenantId, key, hash))) throw new IdempotencyKeyTaken();
    },
    committed: () => {
      ours = true;
    },
  };
  let answer: Answer;
  try {
    answer = await keyed.work(reservation);
  } catch (err) {
    if (err instanceof IdempotencyKeyTaken) return reservedFirst(keyed);
    if (ours) await store.idempotency.release(tenantId, key);
    throw err;
  }
  if (!ours) {
    // The work wrote no reservation (what it would create was stored already): take the key now.
    const late = await store.idempotency.reserve(tenantId, key, hash);
    if (late.kind !== 'reserved') return send(keyed.reply, answer);
  }
  await storeAnswer(keyed, answer);
  return send(keyed.reply, answer);
}

async function storeAnswer({ store, tenantId, key, sealStored }: Keyed, answer: Answer): Promise<void> {
  const stored = answer.body instanceof JsonText ? answer.body.text : JSON.stringify(answer.body);
  await store.idempotency.complete(tenantId, key, answer.statusCode, sealStored ? sealStored.seal(stored) : stored);
}

function send(reply: FastifyReply, answer: Answer) {
  return sendBody(reply, answer.statusCode, answer.body);
}
