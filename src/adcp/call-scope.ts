/**
 * What one call to an agent allows the HTTP requests made on its behalf: its signal
 * (aborted at its deadline) and the cap on each reply's size.
 *
 * Why an async-local scope: the MCP client sends our requests through its transport,
 * which gives every fetch the session's signal, not the call's; our fetch
 * (request-signal.ts) finds the call in this scope and ties each request to it, so
 * a call given up at its deadline closes its connection instead of leaving the
 * seller to drip into it. The scope is entered before the deadline's timer is set,
 * so anything the abort itself sends (the MCP client's `notifications/cancelled`)
 * runs in the aborted scope and is not sent: once we give up on a call, nothing
 * more goes to the seller for it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ReplyTooLargeError } from './reply-limit.js';

export interface CallScope {
  /** Aborted when the call is given up on. */
  signal: AbortSignal;
  /** The largest reply body read, in bytes. */
  maxReplyBytes: number;
  /** A reply passed the cap: the call ends with this error (and its requests are aborted). */
  tooLarge(err: ReplyTooLargeError): void;
  /** Its HTTP requests still running (headers or body still to come), kept by request-signal.ts. */
  requests: Set<AbortController>;
  /** Reply bytes read so far for this call (a large reply is handled in steps: client.ts). */
  replyBytes: number;
}

/** Aborts what is still running for a call that has ended (a reply stream the seller keeps open). */
export function endCallScope(scope: CallScope, reason: Error): void {
  for (const request of scope.requests) request.abort(reason);
  scope.requests.clear();
}

const scopes = new AsyncLocalStorage<CallScope>();

export function runInCallScope<T>(scope: CallScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

export function currentCallScope(): CallScope | undefined {
  return scopes.getStore();
}


/**
 * Runs `fn` in a scope of its own, ended by `signal` rather than by any one call: for
 * work several calls share (see shared-attempt.ts). A reply past the cap rejects it
 * with the ReplyTooLargeError.
 */
export async function runInOwnScope<T>(signal: AbortSignal, maxReplyBytes: number, fn: () => Promise<T>): Promise<T> {
  let tooLarge: ReplyTooLargeError | undefined;
  const own = new AbortController();
  const stop = () => own.abort(signal.reason);
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  const scope: CallScope = {
    signal: own.signal,
    maxReplyBytes,
    tooLarge: (err) => {
      tooLarge = err;
      own.abort(err);
    },
    requests: new Set(),
    replyBytes: 0,
  };
  try {
    return await runInCallScope(scope, fn);
  } catch (err) {
    throw tooLarge ?? (signal.aborted ? signal.reason : err);
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
