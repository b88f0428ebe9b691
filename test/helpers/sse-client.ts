/**
 * A minimal Server-Sent Events client for tests: connects with fetch, parses
 * the stream as it arrives (`event:`, `id:`, `data:` fields and `:` comments),
 * and lets a test wait for a message or comment it expects.
 */
export interface SseMessage {
  /** The `event:` field (a notification type). */
  event: string | undefined;
  /** The `id:` field (a notification id). */
  id: string | undefined;
  /** The `data:` field, parsed as JSON (a notification body). */
  data: any;
}

export interface SseClient {
  status: number;
  /** The error body when status is not 200. */
  body: unknown;
  headers: Headers;
  messages: SseMessage[];
  /** Comment lines (`: heartbeat`), without the colon, with when each arrived. */
  comments: Array<{ text: string; at: number }>;
  /** Resolves with the first `n` messages matching `pred` (waits for them to arrive). */
  waitFor(pred: (m: SseMessage) => boolean, n?: number, timeoutMs?: number): Promise<SseMessage[]>;
  /** Resolves once `n` comments matching `pred` have arrived. */
  waitForComments(pred: (text: string) => boolean, n?: number, timeoutMs?: number): Promise<void>;
  /** The id of the last message parsed: what an EventSource would send as Last-Event-ID. */
  lastEventId(): string | undefined;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const messages: SseMessage[] = [];
  const comments: SseClient['comments'] = [];
  const waiters = new Set<() => void>();
  let lastId: string | undefined;
  if (res.status !== 200) {
    const text = await res.text();
    return {
      status: res.status,
      body: text ? JSON.parse(text) : undefined,
      headers: res.headers,
      messages,
      comments,
      waitFor: async () => [],
      waitForComments: async () => undefined,
      lastEventId: () => undefined,
      close: () => abort.abort(),
    };
  }
  let buffer = '';
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | undefined;
          let event: string | undefined;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push({ text: line.slice(1).trim(), at: Date.now() });
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) {
            messages.push({ id, event, data: JSON.parse(data.join('\n')) });
            if (id !== undefined) lastId = id;
          }
        }
        for (const w of waiters) w();
      }
    } catch {
      /* aborted */
    }
  })();

  function waitUntil(done: () => boolean, describe: () => string, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`SSE: ${describe()} within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  }

  return {
    status: 200,
    body: undefined,
    headers: res.headers,
    messages,
    comments,
    async waitFor(pred, n = 1, timeoutMs = 20_000) {
      await waitUntil(
        () => messages.filter(pred).length >= n,
        () => `${messages.filter(pred).length}/${n} expected messages (got ${messages.length} in all)`,
        timeoutMs,
      );
      return messages.filter(pred).slice(0, n);
    },
    async waitForComments(pred, n = 1, timeoutMs = 20_000) {
      await waitUntil(
        () => comments.filter((c) => pred(c.text)).length >= n,
        () => `${comments.filter((c) => pred(c.text)).length}/${n} expected comments`,
        timeoutMs,
      );
    },
    lastEventId: () => lastId,
    close: () => abort.abort(),
  };
}
