/**
 * Follows `GET /v1/events` (Server-Sent Events of the tenant's notifications) the
 * way an EventSource would, over fetch so that it can send the API key: parsed by
 * eventsource-parser, resumed with `Last-Event-ID` after every drop (the server
 * restarting, a proxy timing out, a silent dead connection noticed by the missing
 * heartbeats), so that nothing is missed and nothing is delivered twice.
 *
 * An answer of 4xx is final (a bad key or cursor will not get better by retrying);
 * no connection, 5xx and 429 are retried with the server's `retry:` interval,
 * doubling while the server stays away, up to a few seconds.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { apiErrorOf, authHeaders, type ApiTarget } from './api-client.js';
import { UnreachableError } from './cli-errors.js';

/** A notification body (docs/ARCHITECTURE.md, Telling users) as the stream carries it; the parts the CLI reads are typed. */
export interface Notification {
  id: string;
  type: string;
  created_at: string;
  tenant_id: string;
  data: {
    /** Absent on a campaign's notification (`campaign.completed`), which carries `campaign` instead. */
    operation?: { id: string; status: string; needs_input: boolean; error?: unknown; [k: string]: unknown };
    event?: StreamEvent;
    [k: string]: unknown;
  };
}

/** An event of an operation's history, as the API and notifications show it. */
export interface StreamEvent {
  id: number;
  at: string;
  source: string;
  kind: string;
  from: string | null;
  to: string | null;
  detail: unknown;
  actor: string | null;
}

export type Verdict = 'stop' | void;

export interface FollowOptions {
  /** Start after this notification; without it the stream starts from now. */
  after?: string;
  /**
   * Called each time a connection is open, before its first notification.
   * `resumed` is false when the stream started from "now" (the first connection
   * without `after`, or a reconnect before any notification arrived): what
   * happened before is not replayed, so the caller reads it elsewhere.
   */
  onOpen?(info: { reconnect: boolean; resumed: boolean }): Promise<Verdict> | Verdict;
  onNotification(n: Notification): Promise<Verdict> | Verdict;
  /** The connection was lost (or could not be made) and will be tried again. */
  onRetrying?(reason: string): void;
  /** A connection is open again after onRetrying. */
  onReconnected?(): void;
  /** No byte for this long (the server sends a heartbeat every 15 s) means the connection is dead. Default 45 s. */
  idleMs?: number;
  /** Longest wait between attempts. Default 5 s. */
  maxBackoffMs?: number;
}

/** Notification ids remembered to drop a repeat; the server should never send one, this is a belt to its braces. */
const REMEMBERED_IDS = 1000;

export async function followEvents(target: ApiTarget, opts: FollowOptions): Promise<void> {
  const idleMs = opts.idleMs ?? 45_000;
  const maxBackoffMs = opts.maxBackoffMs ?? 5000;
  let lastId = opts.after;
  let retryMs = 1000;
  let failures = 0;
  let connections = 0;
  let retrying = false;
  const seen = new Set<string>();

  const lost = async (reason: string) => {
    failures += 1;
    if (!retrying) opts.onRetrying?.(reason);
    retrying = true;
    await new Promise((r) => setTimeout(r, Math.min(retryMs * 2 ** (failures - 1), maxBackoffMs)));
  };

  for (;;) {
    const abort = new AbortController();
    let res: Response;
    try {
      res = await fetch(`${target.url}/v1/events`, {
        headers: { ...authHeaders(target), accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
        signal: abort.signal,
      });
    } catch (err) {
      await lost(new UnreachableError(target.url, err).message);
      continue;
    }
    if (res.status !== 200) {
      const error = apiErrorOf(res.status, await res.text());
      if (res.status < 500 && res.status !== 429) throw error;
      await lost(`the server answered ${res.status} ${error.code}`);
      continue;
    }

    connections += 1;
    failures = 0;
    if (retrying) opts.onReconnected?.();
    retrying = false;
    let idle: NodeJS.Timeout | undefined;
    const stillAlive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => abort.abort(new Error(`nothing from the server for ${idleMs / 1000} s`)), idleMs);
    };
    stillAlive();
    let dropped: string;
    try {
      const resumed = lastId !== undefined;
      if ((await ours(() => opts.onOpen?.({ reconnect: connections > 1, resumed }))) === 'stop') return;
      const arrived: EventSourceMessage[] = [];
      const parser = createParser({ onEvent: (m) => arrived.push(m), onRetry: (ms) => (retryMs = ms), onComment: stillAlive });
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        stillAlive();
        parser.feed(decoder.decode(chunk, { stream: true }));
        for (const message of arrived.splice(0)) {
          if (!message.id || seen.has(message.id)) continue;
          const data = message.data;
          const body = await ours(() => JSON.parse(data) as Notification);
          remember(seen, message.id);
          lastId = message.id;
          if ((await ours(() => opts.onNotification(body))) === 'stop') return;
        }
      }
      dropped = 'the server closed the stream';
    } catch (err) {
      // What the caller's code threw ends the stream; anything else broke the connection (fetch says
      // "terminated" when the server goes away; our idle timer aborts with its own reason).
      if (err instanceof Thrown) throw err.error;
      dropped = err instanceof UnreachableError ? err.message : abort.signal.aborted ? String((abort.signal.reason as Error)?.message ?? 'aborted') : describeDrop(err);
    } finally {
      clearTimeout(idle);
      abort.abort();
    }
    await lost(dropped);
  }
}

/** An error of the caller's own code (or a message that is not JSON), told apart from a broken connection. */
class Thrown {
  constructor(readonly error: unknown) {}
}

/** Runs the caller's code; an unreachable server while it calls the API is a drop like any other, and retried. */
async function ours<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof UnreachableError) throw err;
    throw new Thrown(err);
  }
}

function remember(seen: Set<string>, id: string): void {
  seen.add(id);
  if (seen.size > REMEMBERED_IDS) seen.delete(seen.values().next().value as string);
}

function describeDrop(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return `the connection broke (${cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))})`;
}
