/**
 * MCP transport: one cached Streamable HTTP session per (agent URL, token), a
 * raw `tools/call`, and the agent's tool list.
 *
 * Why not the SDK's `callMCPTool`: on any thrown error (timeout, 429, JSON-RPC
 * -32029, 5xx) it closes the connection and silently sends the same call again,
 * which would retry a mutation sooner than `retry_after` allows and double the
 * wait on a timeout; and it takes no AbortSignal, so `timeoutMs` could not stop
 * the request. We use the MCP client it wraps, with the same headers it sends
 * (`Authorization: Bearer`, `x-adcp-auth`), and decide about retries upstream.
 *
 * `tools/call` goes through `client.request` with the plain CallToolResult schema
 * rather than `client.callTool`, because the latter validates `structuredContent`
 * against the tool's outputSchema once tools were listed, and would turn a
 * seller's slightly-off reply into a client-side error: we want the raw reply.
 *
 * Every HTTP request the client makes runs in the scope of the call it is for
 * (call-scope.ts): our deadline aborts it and closes its connection, and its reply
 * is read only up to the cap on reply size. A session's handshake is shared by the
 * calls waiting on it (shared-attempt.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { currentCallScope, runInOwnScope } from './call-scope.js';
import { readHttpFailure, type HttpFailure } from './http-failure.js';
import { fetchWithRequestSignal, withBody } from './request-signal.js';
import { ReplyTooLargeError } from './reply-limit.js';
import { SharedAttempt } from './shared-attempt.js';
import { signingFetch, type OutboundSigner } from './signing-fetch.js';
import { signingDecision } from './signing-policy.js';
import type { McpToolResult } from './extract-mcp.js';
import { LeanMcpPoller } from './mcp-lean-poll.js';
import type { AgentEndpoint } from './types.js';
import { setBounded } from '../bounded-map.js';

/** Agents whose session key and URL are remembered (oldest forgotten first). */
const MAX_REMEMBERED = 1_000;

/** Per-call slot where the fetch wrapper leaves the HTTP error response it saw. */
const httpSlot = new AsyncLocalStorage<{ failure?: HttpFailure }>();

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The fetch under every session: each request gets a signal of its own (the transport
 * hands each fetch its session-wide signal, which would otherwise collect a listener
 * per request, see request-signal.ts), and is signed when the seller's declaration
 * calls for it (signing-fetch.ts), over the exact bytes sent.
 */
function capturingFetch(signer: OutboundSigner | undefined): Fetch {
  const requestSignalFetch = fetchWithRequestSignal(signingFetch((input, init) => fetch(input, init), signer));
  return async (input, init) => {
    const response = await requestSignalFetch(input, init);
    if (response.ok) return response;
    // An error body is read once, capped, and handed on as that text (the client reads it for its message).
    const failure = await readHttpFailure(response);
    const slot = httpSlot.getStore();
    if (slot && !slot.failure) slot.failure = failure;
    return withBody(response, failure.body ?? '');
  };
}

function authHeaders(token: string | undefined): Record<string, string> {
  // Same pair the SDK sends: sellers built on it read either header.
  return token ? { Authorization: `Bearer ${token}`, 'x-adcp-auth': token } : {};
}

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
  tools?: Promise<Set<string>>;
  /** Calls still running on this session. */
  inFlight: number;
  /** Taken out of the cache after a failure: closed once its last call ends. */
  retired: boolean;
}

export class McpTransport {
  private readonly sessions = new Map<string, SharedAttempt<Session>>();
  /** The lean path for polls (mcp-lean-poll.ts); off: every poll goes through the SDK client. */
  private readonly lean: LeanMcpPoller | undefined;
  private readonly maxReplyBytes: number;
  private readonly fetch: Fetch;

  constructor(opts: { leanPolls?: boolean; maxReplyBytes: number; signer?: OutboundSigner }) {
    this.lean = opts.leanPolls === false ? undefined : new LeanMcpPoller();
    this.maxReplyBytes = opts.maxReplyBytes;
    this.fetch = capturingFetch(opts.signer);
  }

  private key(agent: AgentEndpoint): string {
    // A poll asks twice (its tool list, its session): a SHA-256 each time showed in its profile.
    const known = this.keys.get(agent.url);
    if (known && known.token === agent.authToken) return known.key;
    // The token is hashed so it never sits in a map key that might get logged.
    const tokenHash = agent.authToken ? createHash('sha256').update(agent.authToken).digest('hex').slice(0, 16) : '';
    const key = `${agent.url}#${tokenHash}`;
    setBounded(this.keys, agent.url, { token: agent.authToken, key }, MAX_REMEMBERED);
    return key;
  }

  /** Per agent URL: the last token seen there and the session key made of it (the token is a value, never a key). */
  private readonly keys = new Map<string, { token: string | undefined; key: string }>();

  /** Per agent URL, parsed once: the lean path posts to it on every poll. */
  private url(agent: AgentEndpoint): URL {
    let url = this.urls.get(agent.url);
    if (!url) {
      url = new URL(agent.url);
      setBounded(this.urls, agent.url, url, MAX_REMEMBERED);
    }
    return url;
  }

  private readonly urls = new Map<string, URL>();

  /**
   * The agent's session, connecting if there is none. The handshake runs in a scope of
   * its own (so the session's stream, if the server opens one, outlives the call that
   * connected); it is aborted once every call waiting on it has given up.
   */
  private session(agent: AgentEndpoint): SharedAttempt<Session> {
    const key = this.key(agent);
    let pending = this.sessions.get(key);
    if (!pending) {
      pending = new SharedAttempt(async (signal) => {
        const client = new Client({ name: 'adcp-orchestrator', version: '0.1.0' });
        const transport = new StreamableHTTPClientTransport(new URL(agent.url), {
          requestInit: { headers: authHeaders(agent.authToken) },
          fetch: this.fetch,
        });
        try {
          await runInOwnScope(signal, this.maxReplyBytes, () => client.connect(transport));
        } catch (err) {
          client.close().catch(() => {});
          throw err;
        }
        return { client, transport, inFlight: 0, retired: false };
      });
      const created = pending;
      // A failed connect must not poison the cache for the next call.
      created.promise.catch(() => {
        if (this.sessions.get(key) === created) this.sessions.delete(key);
      });
      this.sessions.set(key, created);
    }
    return pending;
  }

  /**
   * Stops handing out a session that may be broken. Closing it at once would cut every
   * other call still running on it ("Connection closed") and turn healthy calls into
   * ambiguous sends, so it is closed when its last call ends.
   */
  private drop(agent: AgentEndpoint, session: SharedAttempt<Session>): void {
    const key = this.key(agent);
    if (this.sessions.get(key) === session) this.sessions.delete(key);
    session.promise
      .then((s) => {
        s.retired = true;
        if (s.inFlight === 0) return s.client.close();
      })
      .catch(() => {});
  }

  /**
   * One `tools/call`, reply returned raw. `onHttpFailure` receives the HTTP error
   * response seen on the way (for 429/5xx mapping).
   *
   * The only resend: a 404 on a session we had used, which is the MCP way of
   * saying "unknown session" (server restarted). The call never reached a tool,
   * so sending it again on a fresh session is not a retry of the work.
   */
  async callTool(
    agent: AgentEndpoint,
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    onHttpFailure: (failure: HttpFailure) => void,
  ): Promise<McpToolResult> {
    for (let attempt = 0; ; attempt++) {
      const slot: { failure?: HttpFailure } = {};
      // Opened inside the slot so an HTTP error during `initialize` is captured too.
      const pending = httpSlot.run(slot, () => this.session(agent));
      try {
        return await httpSlot.run(slot, async () => {
          const session = await pending.join(signal);
          session.inFlight++;
          try {
            // The MCP client's own timer is set past ours, so ours is the one that fires.
            return await session.client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
              signal,
              timeout: timeoutMs + 1_000,
            });
          } finally {
            session.inFlight--;
            if (session.retired && session.inFlight === 0) session.client.close().catch(() => {});
          }
        });
      } catch (err) {
        if (slot.failure) onHttpFailure(slot.failure);
        const staleSession = err instanceof StreamableHTTPError && err.code === 404 && attempt === 0;
        // A JSON-RPC error or our own deadline leaves the session healthy; anything
        // else (HTTP error, dropped socket) may not, so the next call reconnects.
        if (!(err instanceof McpError) && !signal.aborted) this.drop(agent, pending);
        if (staleSession && !signal.aborted) continue;
        throw err;
      }
    }
  }

  /**
   * A poll (`get_task_status` / `tasks/get`, read-only): the lean path first, on the
   * session the SDK client opened; whatever it does not handle as a plain success goes
   * again through `callTool`, so failures are seen and mapped exactly as before.
   */
  async pollTool(
    agent: AgentEndpoint,
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    onHttpFailure: (failure: HttpFailure) => void,
  ): Promise<McpToolResult> {
    // The lean path sends unsigned: a poll the seller wants signed goes through the client.
    const signed = agent.signing !== undefined && signingDecision(JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name, arguments: args } }), agent.signing).sign;
    if (this.lean && !signed) {
      const result = await this.leanPoll(this.lean, agent, name, args, signal).catch((err) => {
        // Our deadline, or a reply past the cap: not sent again.
        if (signal.aborted || err instanceof ReplyTooLargeError) throw err;
        return undefined;
      });
      if (result) return result;
    }
    return this.callTool(agent, name, args, signal, timeoutMs, onHttpFailure);
  }

  private async leanPoll(lean: LeanMcpPoller, agent: AgentEndpoint, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpToolResult | undefined> {
    const session = await this.session(agent).join(signal);
    if (session.retired) return undefined;
    session.inFlight++;
    try {
      const { sessionId, protocolVersion } = session.transport;
      const target = { sessionId, protocolVersion, headers: authHeaders(agent.authToken) };
      const scope = currentCallScope();
      return await lean.call(this.url(agent), target, name, args, signal, this.maxReplyBytes, (n) => scope && (scope.replyBytes += n));
    } finally {
      session.inFlight--;
      if (session.retired && session.inFlight === 0) session.client.close().catch(() => {});
    }
  }

  /** Names of the tools the agent lists (cached per session; a failed listing is not cached). */
  async toolNames(agent: AgentEndpoint, signal: AbortSignal): Promise<Set<string>> {
    const session = await this.session(agent).join(signal);
    if (!session.tools) {
      session.tools = (async () => {
        const names = new Set<string>();
        let cursor: string | undefined;
        do {
          const page = await session.client.listTools(cursor ? { cursor } : undefined, { signal });
          for (const tool of page.tools) names.add(tool.name);
          cursor = page.nextCursor;
        } while (cursor);
        return names;
      })();
      session.tools.catch(() => (session.tools = undefined));
    }
    return session.tools;
  }

  async close(): Promise<void> {
    this.lean?.close();
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((p) => p.promise.then((s) => s.client.close()).catch(() => {})));
  }
}
