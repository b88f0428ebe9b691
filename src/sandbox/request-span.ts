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
  /** Called with the time the response closed (sent in full, or the client went away). */
  onEnd: Array<(at: number) => void>;
}

const storage = new AsyncLocalStorage<RequestSpan>();

export function runInRequestSpan<T>(res: ServerResponse, fn: () => T): T {
  const span: RequestSpan = { startedAt: Date.now(), onEnd: [] };
  res.once('close', () => {
    const at = Date.now();
    for (const f of span.onEnd) f(at);
  });
  return storage.run(span, fn);
}

export function currentRequestSpan(): RequestSpan | undefined {
  return storage.getStore();
}
