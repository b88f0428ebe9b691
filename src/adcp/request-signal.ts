/**
 * A fetch that gives each request its own AbortSignal, aborted with the
 * caller's signal while that request is in flight.
 *
 * Why: the MCP client transport passes one session-wide AbortController signal
 * (aborted when the session closes) to every fetch it makes. Node's fetch
 * (undici) makes each Request's own signal follow the one given, and only
 * removes that listener when the Request is garbage-collected. A session used
 * for thousands of polls therefore carried thousands of `abort` listeners
 * between collections, and past 1,500 Node printed
 * `MaxListenersExceededWarning: Possible EventTarget memory leak detected` on
 * every call.
 *
 * Here a long-lived signal carries exactly one listener, added the first time
 * it is seen, which aborts the requests registered as in flight on it. A
 * request is registered until it fails, or its body has been read to the end,
 * cancelled or has errored; closing the session therefore still aborts every
 * request (and every body still being read) running then, whatever their
 * number (64 polls at once would be 64 listeners otherwise, over Node's 10).
 */

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose Response must have a null body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** Requests in flight per long-lived signal; entries go with their signal. */
const inFlight = new WeakMap<AbortSignal, Set<AbortController>>();

/** A controller aborted with `outer`, and the function that stops it following. */
function follow(outer: AbortSignal): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  if (outer.aborted) {
    controller.abort(outer.reason);
    return { signal: controller.signal, release: () => {} };
  }
  let requests = inFlight.get(outer);
  if (!requests) {
    const registered = new Set<AbortController>();
    outer.addEventListener(
      'abort',
      () => {
        for (const request of registered) request.abort(outer.reason);
        registered.clear();
      },
      { once: true },
    );
    inFlight.set(outer, registered);
    requests = registered;
  }
  requests.add(controller);
  const registered = requests;
  return { signal: controller.signal, release: () => registered.delete(controller) };
}

export function fetchWithRequestSignal(base: Fetch = (input, init) => fetch(input, init)): Fetch {
  return async (input, init) => {
    const outer = init?.signal;
    if (!outer) return base(input, init);
    const { signal, release } = follow(outer);
    let response: Response;
    try {
      response = await base(input, { ...init, signal });
    } catch (err) {
      release();
      throw err;
    }
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) {
      release();
      return response;
    }
    return releaseWhenBodyEnds(response, response.body, release);
  };
}

/** The same response, whose body calls `done` once it is fully read, cancelled or errored. */
function releaseWhenBodyEnds(response: Response, source: ReadableStream<Uint8Array>, done: () => void): Response {
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          done();
          controller.close();
        } else controller.enqueue(chunk.value);
      } catch (err) {
        done();
        controller.error(err);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
  const wrapped = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  // The constructor cannot set these; redirect handling reads `url` (the MCP SDK
  // names the redirect target from it).
  Object.defineProperties(wrapped, {
    url: { value: response.url },
    redirected: { value: response.redirected },
  });
  return wrapped;
}

/** Requests registered as in flight on `signal` (what a leak would make grow). */
export function requestsInFlight(signal: AbortSignal): number {
  return inFlight.get(signal)?.size ?? 0;
}
