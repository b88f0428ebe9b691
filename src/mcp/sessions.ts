/**
 * MCP sessions of this process. A session is opened by an `initialize` request, bound
 * to the API key that sent it, and lives here, on the instance it connected to (its
 * resource subscriptions ride on its GET stream, fed by the notifications feed that
 * crosses instances). A request with a session id this process does not hold, or sent
 * with another key, is "session not found", and the client opens a new one (as after
 * our restart: tasks and operations are durable, sessions are not).
 *
 * Sessions end on DELETE, when idle for IDLE_MS with no open stream, or at shutdown.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { RequestAuth } from '../api/auth.js';
import type { McpServices } from './context.js';
import { buildSessionServer, type SessionServer } from './session-server.js';

/** A session with no request and no open stream for this long is closed. */
const IDLE_MS = 30 * 60_000;
const SWEEP_EVERY_MS = 60_000;
/** Sessions held at once by this process, all keys together: a bound on what clients can make us keep. */
const MAX_SESSIONS = 10_000;

interface Session {
  keyId: string;
  transport: StreamableHTTPServerTransport;
  built: SessionServer;
  lastSeenAt: number;
  openStreams: number;
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly services: McpServices) {}

  get size(): number {
    return this.sessions.size;
  }

  get full(): boolean {
    return this.sessions.size >= MAX_SESSIONS;
  }

  /** An initialize request: a new session for this key, answered by the SDK's transport. */
  async open(auth: RequestAuth, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const built = buildSessionServer(auth, this.services);
    let session: Session | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session = { keyId: auth.keyId, transport, built, lastSeenAt: Date.now(), openStreams: 0 };
        this.sessions.set(id, session);
        this.startSweeper();
      },
    });
    // Set before connect, which chains the transport's close to it: DELETE, idle or shutdown all end here.
    built.server.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      built.close();
    };
    await built.server.connect(transport);
    try {
      await transport.handleRequest(req, res, body);
    } finally {
      // An initialize the transport refused (wrong Accept, a batch…) or that failed opened nothing to keep.
      if (!session) await built.server.close();
    }
  }

  /** The session `id` if it is this key's; undefined otherwise (unknown, ended, elsewhere, or another key's). */
  holds(id: string, keyId: string): boolean {
    return this.sessions.get(id)?.keyId === keyId;
  }

  /** A request within a session (tools, resources, tasks; GET opens its notification stream; DELETE ends it). */
  async handle(id: string, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) throw new Error(`MCP session ${id} vanished`);
    session.lastSeenAt = Date.now();
    if (req.method === 'GET') {
      session.openStreams++;
      res.once('close', () => {
        session.openStreams--;
        session.lastSeenAt = Date.now();
      });
    }
    await session.transport.handleRequest(req, res, body);
  }

  /** Ends every session (their streams, so the HTTP server can close, and their feed subscriptions). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.all([...this.sessions.values()].map((s) => s.built.server.close().catch(() => undefined)));
    this.sessions.clear();
  }

  private startSweeper(): void {
    this.sweeper ??= setInterval(() => {
      const idleSince = Date.now() - IDLE_MS;
      for (const s of this.sessions.values()) {
        if (s.openStreams === 0 && s.lastSeenAt < idleSince) void s.built.server.close().catch(() => undefined);
      }
    }, SWEEP_EVERY_MS).unref();
  }
}
