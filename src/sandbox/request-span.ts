/**
 * The HTTP request a piece of sandbox-seller work runs inside, so that records
 * made deep in a tool handler (a poll) can carry when the request arrived and
 * when its reply finished. Tests use those times to prove that two polls of one
 * task never overlapped; the handler's own instant would be too narrow.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';

export interface RequestSpan {
  startedAt: number;
  /** The bearer token the request carried, if any (scripted credential checks read it). */
  bearer?: string;
  /** Called with the time the response closed (sent in full, or the client went away). */
  onEnd: Array<(at: number) => void>;
}

const storage = new AsyncLocalStorage<RequestSpan>();

export function runInRequestSpan<T>(res: ServerResponse, fn: () => T, bearer?: string): T {
  const span: RequestSpan = { startedAt: Date.now(), onEnd: [], ...(bearer !== undefined && { bearer }) };
  res.once('close', () => {
    const at = Date.now();
    for (const f of span.onEnd) f(at);
  });
  return storage.run(span, fn);
}

export function currentRequestSpan(): RequestSpan | undefined {
  return storage.getStore();
}

/**
 * Runs `fn` as part of a request whose bearer token is known. The A2A library
 * parses requests off the socket's own callbacks, so the span set around the
 * HTTP handler does not reach its executor; the executor re-enters it with this.
 */
export function runWithBearer<T>(bearer: string | undefined, fn: () => T): T {
  const outer = storage.getStore();
  return storage.run({ startedAt: outer?.startedAt ?? Date.now(), onEnd: outer?.onEnd ?? [], ...(bearer !== undefined && { bearer }) }, fn);
}

/** The bearer token of the request being served, if any. */
export function currentBearer(): string | undefined {
  return storage.getStore()?.bearer;
}
