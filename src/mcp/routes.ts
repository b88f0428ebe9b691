/**
 * `/mcp` on the API's Fastify app: MCP Streamable HTTP (POST messages, GET the session's
 * notification stream, DELETE the session), in a scope of its own so its errors are
 * JSON-RPC errors, not the API's error shape. Every request carries the same API key as
 * /v1 (`Authorization: Bearer`), checked before its body is read; the key's tenant and
 * role decide everything the session may see and do.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { authenticate, type RequestAuth } from '../api/auth.js';
import { DATABASE_UNAVAILABLE_MESSAGE, databaseUnavailableAnswer } from '../api/errors.js';
import type { DatabaseOutage } from '../engine/database-outage.js';
import type { Store } from '../store/index.js';
import type { McpSessions } from './sessions.js';

/** As the API's: a tool's arguments carry whole AdCP requests, never more than this. */
export const MCP_BODY_LIMIT = 1024 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    mcpAuth?: RequestAuth;
  }
}

const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0' as const, error: { code, message }, id: null });

export function mcpRoutes(deps: { store: Store; sessions: McpSessions; outage?: DatabaseOutage }) {
  return async (app: FastifyInstance) => {
    await app.register(async (scope) => {
      scope.setErrorHandler((err: FastifyError, req, reply) => {
        switch (err.code) {
          case 'FST_ERR_CTP_BODY_TOO_LARGE':
            return reply.code(413).send(rpcError(-32600, `the request is larger than ${MCP_BODY_LIMIT} bytes`));
          case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
            return reply.code(415).send(rpcError(-32600, 'send Content-Type: application/json'));
          case 'FST_ERR_CTP_EMPTY_JSON_BODY':
          case 'FST_ERR_CTP_INVALID_JSON_BODY':
            return reply.code(400).send(rpcError(-32700, 'parse error: the body is not valid JSON'));
        }
        if (err instanceof SyntaxError) return reply.code(400).send(rpcError(-32700, 'parse error: the body is not valid JSON'));
        const away = databaseUnavailableAnswer(err, 'mcp', deps.outage);
        if (away) return reply.code(away.statusCode).headers(away.headers).send(rpcError(-32000, `database_unavailable: ${DATABASE_UNAVAILABLE_MESSAGE}`));
        req.log.error({ err }, 'MCP: unhandled error');
        return reply.code(500).send(rpcError(-32603, 'internal error'));
      });
      scope.route({
        method: ['GET', 'POST', 'DELETE'],
        url: '/mcp',
        bodyLimit: MCP_BODY_LIMIT,
        schema: { hide: true },
        onRequest: async (req, reply) => {
          const found = await authenticate(deps.store, req.headers.authorization);
          if ('code' in found) return reply.code(401).header('WWW-Authenticate', found.wwwAuthenticate).send(rpcError(-32001, `unauthorized: ${found.message}`));
          req.mcpAuth = found.auth;
        },
        handler: (req, reply) => serve(deps.sessions, req, reply),
      });
    });
  };
}

async function serve(sessions: McpSessions, req: FastifyRequest, reply: FastifyReply) {
  const auth = req.mcpAuth!;
  // Fastify reads text/plain too; MCP messages are JSON only.
  if (req.method === 'POST' && !/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    return reply.code(415).send(rpcError(-32600, 'send Content-Type: application/json'));
  }
  const sessionId = req.headers['mcp-session-id'];
  if (typeof sessionId === 'string') {
    // Another key's session is as unknown as one that ended: a key learns nothing of others.
    if (!sessions.holds(sessionId, auth.keyId)) {
      return reply.code(404).send(rpcError(-32001, 'session not found: it ended, or lives on another instance; send initialize to open a new one'));
    }
    return handOver(reply, () => sessions.handle(sessionId, req.raw, reply.raw, req.body));
  }
  if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
    return reply.code(400).send(rpcError(-32000, 'no session: send initialize first (without Mcp-Session-Id), then the Mcp-Session-Id it answers with on every request'));
  }
  if (sessions.full) return reply.code(503).header('retry-after', '60').send(rpcError(-32000, 'too many MCP sessions on this instance; try again later'));
  return handOver(reply, () => sessions.open(auth, req.raw, reply.raw, req.body));
}

/** The SDK's transport writes the response itself; a failure before it wrote anything still gets an answer. */
async function handOver(reply: FastifyReply, run: () => Promise<void>): Promise<void> {
  reply.hijack();
  try {
    await run();
  } catch (err) {
    reply.log.error({ err }, 'MCP: request failed');
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify(rpcError(-32603, 'internal error')));
    }
  }
}
