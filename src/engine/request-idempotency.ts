/**
 * A client's idempotency key on a request that changes something (the API's
 * `Idempotency-Key` header, an MCP tool's `idempotency_key` argument): the same key
 * with the same request returns the first answer; with a different request, 409
 * `idempotency_key_reused`. A key is reserved before the work writes anything, so two
 * concurrent requests under one key cannot both do it: in a commit of its own before
 * the work, or (reserveInWork) inside the work's first write, the one that stores the
 * operation, so that both share one commit.
 *
 * Both front doors go through here, so a model retrying a tool call and a script
 * retrying a POST get exactly the same guarantees.
 */
import { jsonTextOf } from '../domain/json-text.js';
import type { Store } from '../store/index.js';
import { IdempotencyKeyTaken, type KeyReservation, type Reservation } from '../store/idempotency-repo.js';
import { EngineError } from './errors.js';

export interface KeyedAnswer {
  statusCode: number;
  body: unknown;
}

/** Seals a stored answer that carries a secret (a new subscription's signing secret), so none is kept in clear. */
export interface StoredAnswerSeal {
  seal(text: string): string;
  open(sealed: string): string;
}

export interface KeyedRequest {
  tenantId: string;
  /** The client's key, checked with checkIdempotencyKey. */
  key: string;
  /** A keyed digest (SecretBox.digest) of everything that makes two requests the same one. */
  hash: string;
}

export interface AnswerOnceOptions {
  sealStored?: StoredAnswerSeal;
  /**
   * The work reserves the key itself, in the write that stores what it creates
   * (CreateOperationInput.reservation), instead of in a commit of its own before it.
   */
  reserveInWork?: boolean;
}

/** 1-255 visible ASCII characters: what a header can carry, and what a tool argument is held to as well. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export function checkIdempotencyKey(key: unknown): string {
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new EngineError('invalid_idempotency_key', 'an idempotency key must be 1-255 visible ASCII characters', 400);
  }
  return key;
}

/** The answer, and whether it is the stored answer of an earlier request under the key. */
export type OnceResult = KeyedAnswer & { replayed: boolean };

export async function answerOnce(
  store: Store,
  request: KeyedRequest,
  work: (reservation?: KeyReservation) => Promise<KeyedAnswer>,
  options: AnswerOnceOptions = {},
): Promise<OnceResult> {
  const keyed: Keyed = { store, ...request, work, sealStored: options.sealStored };
  if (options.reserveInWork) {
    const found = await store.idempotency.find(request.tenantId, request.key, request.hash);
    if (!found) return reservedInWork(keyed);
    if (found.kind !== 'in_progress' || !found.abandoned) return answerFor(keyed, found);
  }
  return reservedFirst(keyed);
}

interface Keyed extends KeyedRequest {
  store: Store;
  work: (reservation?: KeyReservation) => Promise<KeyedAnswer>;
  sealStored: StoredAnswerSeal | undefined;
}

/** The key's record answers the request without running the work (or refuses it). */
function answerFor({ sealStored }: Keyed, found: Exclude<Reservation, { kind: 'reserved' }>): OnceResult {
  switch (found.kind) {
    case 'replay':
      return { statusCode: found.statusCode, body: JSON.parse(sealStored ? sealStored.open(found.body) : found.body), replayed: true };
    case 'mismatch':
      throw new EngineError('idempotency_key_reused', 'this idempotency key was used with a different request', 409);
    case 'in_progress':
      throw new EngineError('idempotency_key_in_progress', 'a request with this idempotency key is still being processed; retry in a moment', 409);
  }
}

/** The key reserved in a commit of its own, then the work. */
async function reservedFirst(keyed: Keyed): Promise<OnceResult> {
  const { store, tenantId, key, hash } = keyed;
  const reservation = await store.idempotency.reserve(tenantId, key, hash);
  // A reservation older than any request can take was left by a process that died
  // mid-request. The work behind every request is itself idempotent (operations are keyed
  // by the derived AdCP key), so running it again reaches the same result.
  if (reservation.kind !== 'reserved' && !(reservation.kind === 'in_progress' && reservation.abandoned)) return answerFor(keyed, reservation);
  let answer: KeyedAnswer;
  try {
    answer = await keyed.work();
  } catch (err) {
    // Errors are not kept: the client may fix the request and retry under the same key.
    await store.idempotency.release(tenantId, key);
    throw err;
  }
  await storeAnswer(keyed, answer);
  return { ...answer, replayed: false };
}

/**
 * Nobody held the key when we looked: the work reserves it in the write that stores
 * what it creates. A request that took the key in between makes that write throw
 * (nothing of ours is left) and we answer as if we had found its reservation.
 */
async function reservedInWork(keyed: Keyed): Promise<OnceResult> {
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
  let answer: KeyedAnswer;
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
    if (late.kind !== 'reserved') return { ...answer, replayed: false };
  }
  await storeAnswer(keyed, answer);
  return { ...answer, replayed: false };
}

async function storeAnswer({ store, tenantId, key, sealStored }: Keyed, answer: KeyedAnswer): Promise<void> {
  const stored = jsonTextOf(answer.body);
  await store.idempotency.complete(tenantId, key, answer.statusCode, sealStored ? sealStored.seal(stored) : stored);
}
