/**
 * GET /v1/events: the tenant's notifications (docs/ARCHITECTURE.md, Telling users) as Server-Sent Events.
 *
 * Each message is one notification: `event:` its type, `id:` its id, `data:` its
 * body exactly as stored (and as posted to subscribers). A client resumes with
 * `Last-Event-ID` (EventSource sends it on reconnect) or `?after=<notification id>`:
 * everything after that notification is replayed from the database, then the
 * stream goes live, with nothing missed and nothing repeated. Without either it
 * starts from now. `?types=a,b` keeps only those types. A `: heartbeat` comment
 * keeps idle connections open through proxies. Delivery itself is the EventFeed's job.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { requireApiKey, requireRole, tenantOf } from '../api/auth.js';
import { errorBody } from '../api/errors.js';
import { isNotificationType, NOTIFICATION_TYPES } from '../domain/notification-types.js';
import type { NotificationRow, Store } from '../store/index.js';
import type { EventFeed } from './event-feed.js';

export interface SseOptions {
  /** A comment line this often keeps proxies and load balancers from closing an idle stream. */
  heartbeatMs: number;
  /** Sent as `retry:`, how soon EventSource reconnects after a drop. */
  retryMs: number;
}

export const DEFAULT_SSE_OPTIONS: SseOptions = { heartbeatMs: 15_000, retryMs: 1000 };

const NOTIFICATION_ID = /^ntf_[0-9a-f-]{36}$/;

type Resume = { seq: number } | { error: string } | undefined;

export function eventsRoutes(store: Store, feed: EventFeed, options: SseOptions = DEFAULT_SSE_OPTIONS) {
  return (app: FastifyInstance) => {
    app.get(
      '/v1/events',
      {
        preHandler: [requireApiKey(store), requireRole('viewer')],
        schema: {
          description:
            'Server-Sent Events of the tenant’s notifications (event: type, id: notification id, data: the notification); resumable with Last-Event-ID or ?after=<notification id>; ?types= a comma-separated list of notification types',
          querystring: z.object({ after: z.string().max(64).optional(), types: z.string().max(1000).optional() }),
        },
      },
      async (req, reply) => {
        const tenant = tenantOf(req);
        const query = (req.query ?? {}) as { after?: string; types?: string };
        const types = typesFrom(query.types);
        if (types instanceof Error) return reply.code(400).send(errorBody('invalid_types', types.message, { allowed: NOTIFICATION_TYPES }));
        const resume = await resumeFrom(store, tenant.id, req, query.after);
        if (resume && 'error' in resume) return reply.code(400).send(errorBody('invalid_cursor', resume.error));
        const after = resume ? resume.seq : await feed.startingPoint();
        openStream(req, reply, (res) => stream(res, feed, tenant.id, after, types, options));
      },
    );
  };
}

/** Last-Event-ID wins over ?after: it is what a reconnecting EventSource sends for the URL it was given. */
async function resumeFrom(store: Store, tenantId: string, req: FastifyRequest, query: string | undefined): Promise<Resume> {
  const header = req.headers['last-event-id'];
  const value = typeof header === 'string' && header.trim() !== '' ? header.trim() : query;
  if (value === undefined || value === '') return undefined;
  // Another tenant's notification is as unknown as a made-up one.
  const found = NOTIFICATION_ID.test(value) ? await store.notifications.findById(tenantId, value) : undefined;
  if (!found) return { error: 'Last-Event-ID and ?after must be the id of one of your notifications (ntf_…)' };
  return { seq: found.seq };
}

function typesFrom(text: string | undefined): ReadonlySet<string> | undefined | Error {
  if (text === undefined || text.trim() === '') return undefined;
  const list = text.split(',').map((t) => t.trim()).filter((t) => t !== '');
  const unknown = list.filter((t) => !isNotificationType(t));
  if (unknown.length > 0) return new Error(`unknown notification type(s) in ?types: ${unknown.join(', ')}`);
  return new Set(list);
}

/** The status and headers of an event stream (the API's and the dashboard's). */
export function writeEventStreamHead(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // nginx and friends buffer responses unless told otherwise.
    'x-accel-buffering': 'no',
  });
}

/** Takes the response away from Fastify (it would otherwise end it when the handler returns). */
function openStream(req: FastifyRequest, reply: FastifyReply, run: (res: ServerResponse) => () => void): void {
  reply.hijack();
  const res = reply.raw;
  writeEventStreamHead(res);
  const cleanup = run(res);
  req.raw.once('close', cleanup);
  res.once('close', cleanup);
}

function stream(res: ServerResponse, feed: EventFeed, tenantId: string, after: number, types: ReadonlySet<string> | undefined, options: SseOptions): () => void {
  let done = false;
  res.write(`retry: ${options.retryMs}\n: connected\n\n`);
  const heartbeat = setInterval(() => {
    if (!res.destroyed && !res.writableEnded) res.write(': heartbeat\n\n');
  }, options.heartbeatMs);
  heartbeat.unref();
  const subscription = feed.subscribe(
    tenantId,
    after,
    {
      deliver: (rows) => write(res, rows.map(formatNotification).join('')),
      end: () => res.end(),
    },
    types,
  );
  return () => {
    if (done) return;
    done = true;
    clearInterval(heartbeat);
    subscription.close();
  };
}

/** The stored body is JSON text, which never holds a raw newline: one data: line is enough. */
export function formatNotification(n: NotificationRow): string {
  return `event: ${n.type}\nid: ${n.id}\ndata: ${n.body}\n\n`;
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
