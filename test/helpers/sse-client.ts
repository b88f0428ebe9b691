/**
 * A minimal Server-Sent Events client for tests: connects with fetch, parses
 * the stream as it arrives, and lets a test wait for a message it expects.
 */
export interface SseMessage {
  id: string | undefined;
  data: any;
}

export interface SseClient {
  status: number;
  /** The error body when status is not 200. */
  body: unknown;
  messages: SseMessage[];
  /** Resolves with the first `n` messages matching `pred` (waits for them to arrive). */
  waitFor(pred: (m: SseMessage) => boolean, n?: number, timeoutMs?: number): Promise<SseMessage[]>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const messages: SseMessage[] = [];
  const waiters = new Set<() => void>();
  if (res.status !== 200) {
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, messages, waitFor: async () => [], close: () => abort.abort() };
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
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) messages.push({ id, data: JSON.parse(data.join('\n')) });
        }
        for (const w of waiters) w();
      }
    } catch {
      /* aborted */
    }
  })();
  return {
    status: 200,
    body: undefined,
    messages,
    waitFor(pred, n = 1, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hits = messages.filter(pred);
          if (hits.length >= n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(hits.slice(0, n));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`SSE: ${messages.filter(pred).length}/${n} expected messages within ${timeoutMs} ms (got ${messages.length} in all)`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => abort.abort(),
  };
}
