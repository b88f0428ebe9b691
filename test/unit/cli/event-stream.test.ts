/**
 * The CLI's SSE follower against small real HTTP servers on loopback that misbehave
 * on purpose: a refused key is final; a dead connection (no byte, no heartbeat) is
 * noticed and replaced; a resumed stream carries Last-Event-ID; an id seen before
 * is not delivered twice; a message split across packets is put back together.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/cli/cli-errors.js';
import { followEvents, type Notification } from '../../../src/cli/event-stream.js';

interface Connection {
  lastEventId: string | undefined;
  res: http.ServerResponse;
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server whose answer to each GET /v1/events the test scripts, connection by connection. */
async function scriptedServer(onConnection: (c: Connection, n: number) => void) {
  const connections: Connection[] = [];
  const server = http.createServer((req, res) => {
    const c = { lastEventId: req.headers['last-event-id'] as string | undefined, res };
    connections.push(c);
    onConnection(c, connections.length);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections };
}

const open = (res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('retry: 50\n: connected\n\n');
};
const message = (id: string, type = 'operation.created') =>
  `event: ${type}\nid: ${id}\ndata: ${JSON.stringify({ id, type, created_at: '2026-01-01T00:00:00.000Z', tenant_id: 't', data: { operation: { id: 'op', status: 'requested', needs_input: false }, event: { id: 1 } } })}\n\n`;

describe('followEvents', () => {
  it('a 4xx answer is final: the API error, no retry', async () => {
    const srv = await scriptedServer((c) => c.res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'unauthorized', message: 'API key not recognised' } })));
    const err = await followEvents({ url: srv.url, apiKey: 'k' }, { onNotification: () => undefined }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 401, code: 'unauthorized', message: 'API key not recognised' });
    expect(srv.connections).toHaveLength(1);
  });

  it('a connection that goes silent is replaced, resuming after the last notification; repeats and split messages are handled', async () => {
    const srv = await scriptedServer((c, n) => {
      open(c.res);
      if (n === 1) {
        // Half a message, then the rest: one notification. Then silence (no heartbeat): a dead connection.
        const text = message('ntf_1');
        c.res.write(text.slice(0, 20));
        setTimeout(() => c.res.write(text.slice(20)), 30);
      } else {
        // The server (wrongly) repeats the last one before going on: delivered once.
        c.res.write(message('ntf_1') + message('ntf_2', 'operation.completed'));
      }
    });
    const got: Notification[] = [];
    const notes: string[] = [];
    await followEvents(
      { url: srv.url, apiKey: 'k' },
      {
        idleMs: 300,
        onRetrying: (reason) => notes.push(reason),
        onReconnected: () => notes.push('reconnected'),
        onNotification: (n) => {
          got.push(n);
          return n.type === 'operation.completed' ? 'stop' : undefined;
        },
      },
    );
    expect(got.map((n) => n.id)).toEqual(['ntf_1', 'ntf_2']);
    expect(srv.connections.map((c) => c.lastEventId)).toEqual([undefined, 'ntf_1']);
    expect(notes).toEqual(['nothing from the server for 0.3 s', 'reconnected']);
  });

  it('a server that closes the stream or answers 503 is tried again; onOpen says whether the stream resumed', async () => {
    const srv = await scriptedServer((c, n) => {
      if (n === 1) {
        open(c.res);
        c.res.end();
      } else if (n === 2) {
        c.res.writeHead(503).end();
      } else {
        open(c.res);
        c.res.write(message('ntf_9', 'operation.completed'));
      }
    });
    const opens: Array<{ reconnect: boolean; resumed: boolean }> = [];
    await followEvents(
      { url: srv.url, apiKey: 'k' },
      {
        after: undefined,
        onOpen: (info) => void opens.push(info),
        onNotification: () => 'stop',
      },
    );
    expect(srv.connections).toHaveLength(3);
    // No notification had come before the drop: nothing to resume after, and the caller is told so.
    expect(opens).toEqual([
      { reconnect: false, resumed: false },
      { reconnect: true, resumed: false },
    ]);
  });
});
