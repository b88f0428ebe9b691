/**
 * GET /v1/events: the tenant's operation events as Server-Sent Events.
 *
 * Each message is one row of `operation_events` (as in GET /v1/operations/:id)
 * plus `operation_id` and the operation's current `status`; its `id:` is the
 * event id. A client resumes with `Last-Event-ID` (EventSource sends it on
 * reconnect) or `?after=<id>`: everything after that id is replayed from the
 * database, then the stream goes live. Without either, it starts at the
 * tenant's newest event. Delivery itself is the EventFeed's job.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { requireApiKey, requireRole, tenantOf } from '../api/auth.js';
import { errorBody } from '../api/errors.js';
import { presentEvent } from '../api/present.js';
import type { Store } from '../store/index.js';
import type { EventFeed, FeedEvent } from './event-feed.js';

export interface SseOptions {
  /** A comment line this often keeps proxies and load balancers from closing an idle stream. */
  heartbeatMs: number;
  /** Sent as `retry:`, how soon EventSource reconnects after a drop. */
  retryMs: number;
}

const CURSOR = /^\d{1,15}$/;

export function eventsRoutes(store: Store, feed: EventFeed, options: SseOptions = { heartbeatMs: 15_000, retryMs: 1000 }) {
  return (app: FastifyInstance) => {
    app.get(
      '/v1/events',
      {
        preHandler: [requireApiKey(store), requireRole('viewer')],
        schema: {
          description: 'Server-Sent Events of the tenant’s operation events; resumable with Last-Event-ID or ?after=<event id>',
          querystring: z.object({ after: z.string().max(20).optional() }),
        },
      },
      async (req, reply) => {
        const tenant = tenantOf(req);
        const given = resumeFrom(req);
        if (given === 'invalid') {
          return reply.code(400).send(errorBody('invalid_cursor', 'Last-Event-ID and ?after must be an event id (a non-negative integer)'));
        }
        const after = given ?? (await newestEventId(store, tenant.id));
        openStream(req, reply, (res) => stream(res, feed, tenant.id, after, options));
      },
    );
  };
}

/** Last-Event-ID wins over ?after: it is what a reconnecting EventSource sends for the URL it was given. */
function resumeFrom(req: FastifyRequest): number | undefined | 'invalid' {
  const header = req.headers['last-event-id'];
  const query = (req.query as { after?: string } | undefined)?.after;
  const value = typeof header === 'string' && header.trim() !== '' ? header.trim() : query;
  if (value === undefined || value === '') return undefined;
  return CURSOR.test(value) ? Number(value) : 'invalid';
}

async function newestEventId(store: Store, tenantId: string): Promise<number> {
  const row = await store.db.kysely
    .selectFrom('operation_events')
    .select((eb) => eb.fn.max('id').as('max'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}

/** Takes the response away from Fastify (it would otherwise end it when the handler returns). */
function openStream(req: FastifyRequest, reply: FastifyReply, run: (res: ServerResponse) => () => void): void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // nginx and friends buffer responses unless told otherwise.
    'x-accel-buffering': 'no',
  });
  const cleanup = run(res);
  req.raw.once('close', cleanup);
  res.once('close', cleanup);
}

function stream(res: ServerResponse, feed: EventFeed, tenantId: string, after: number, options: SseOptions): () => void {
  let done = false;
  res.write(`retry: ${options.retryMs}\n: connected\n\n`);
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), options.heartbeatMs);
  heartbeat.unref();
  const subscription = feed.subscribe(tenantId, after, {
    deliver: (events) => write(res, events.map(formatEvent).join('')),
    end: () => res.end(),
  });
  return () => {
    if (done) return;
    done = true;
    clearInterval(heartbeat);
    subscription.close();
  };
}

export function formatEvent(e: FeedEvent): string {
  const data = { ...presentEvent(e.row), operation_id: e.row.operation_id, status: e.status };
  // JSON.stringify never emits a raw newline, so one data: line is enough.
  return `id: ${e.row.id}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Resolves once the socket has taken the text (waits for 'drain' on a slow client). */
function write(res: ServerResponse, text: string): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.reject(new Error('stream closed'));
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onDrain = () => {
      res.off('close', onClose);
      resolve();
    };
    const onClose = () => {
      res.off('drain', onDrain);
      reject(new Error('stream closed'));
    };
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}
