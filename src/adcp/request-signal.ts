/**
 * A fetch that gives each request its own AbortSignal, aborted with the
 * caller's signal while that request is in flight, and with the call it is
 * made for (call-scope.ts); and that counts each reply body against that
 * call's cap on reply size.
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
 *
 * The session's signal alone would keep a request running after its call was
 * given up on (a seller dripping its reply held the connection for minutes): so
 * the call's own signal aborts it too, which closes the connection. A call's
 * signal lives as long as the call, so it gets a plain listener, removed with
 * the request. A body past the call's cap aborts the request the same way, and
 * the call ends with ReplyTooLargeError.
 */
import { currentCallScope, type CallScope } from './call-scope.js';
import { countedBody } from './reply-limit.js';

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose Response must have a null body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** Requests in flight per long-lived signal; entries go with their signal. */
const inFlight = new WeakMap<AbortSignal, Set<AbortController>>();

/** Makes `request` abort with `outer` while registered; returns the function that stops it following. */
function follow(outer: AbortSignal, request: AbortController): () => void {
  if (outer.aborted) {
    request.abort(outer.reason);
    return () => {};
  }
  let requests = inFlight.get(outer);
  if (!requests) {
    const registered = new Set<AbortController>();
    outer.addEventListener(
      'abort',
      () => {
        for (const r of registered) r.abort(outer.reason);
        registered.clear();
      },
      { once: true },
    );
    inFlight.set(outer, registered);
    requests = registered;
  }
  requests.add(request);
  const registered = requests;
  return () => registered.delete(request);
}

/** Makes `request` abort with the call's signal; returns the function that removes the listener. */
function followCall(scope: CallScope, request: AbortController): () => void {
  if (scope.signal.aborted) {
    request.abort(scope.signal.reason);
    return () => {};
  }
  const onAbort = () => request.abort(scope.signal.reason);
  scope.signal.addEventListener('abort', onAbort, { once: true });
  scope.requests.add(request);
  return () => {
    scope.signal.removeEventListener('abort', onAbort);
    scope.requests.delete(request);
  };
}

export function fetchWithRequestSignal(base: Fetch = (input, init) => fetch(input, init), scopeOf: () => CallScope | undefined = currentCallScope): Fetch {
  return async (input, init) => {
    const outer = init?.signal ?? undefined;
    const scope = scopeOf();
    if (!outer && !scope) return base(input, init);
    const request = new AbortController();
    const stops = [outer ? follow(outer, request) : () => {}, scope ? followCall(scope, request) : () => {}];
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      for (const stop of stops) stop();
    };
    let response: Response;
    try {
      response = await base(input, { ...init, signal: request.signal });
    } catch (err) {
      release();
      throw err;
    }
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) {
      release();
      return response;
    }
    const body = countedBody(response.body, {
      limit: scope?.maxReplyBytes,
      onChunk: (bytes) => {
        if (scope) scope.replyBytes += bytes;
      },
      onEnd: release,
      onTooLarge: (err) => {
        // Stop reading and close the connection, then end the call with the reason.
        request.abort(err);
        scope?.tooLarge(err);
      },
    });
    return withBody(response, body);
  };
}

/** The same response with another body (status, headers, url and redirect flag kept). */
export function withBody(response: Response, body: ReadableStream<Uint8Array> | string): Response {
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
