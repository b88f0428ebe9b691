/**
 * The webhook routes' request logger (src/webhooks/lazy-child-logger.ts): made only
 * when a request logs, and then the same line as Fastify's own child would write,
 * request id and redaction included. Through a real Fastify app with the real logger.
 */
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { lazyChildLogger } from '../../../src/webhooks/lazy-child-logger.js';
import { capturedLogger as capture } from '../../helpers/log-capture.js';

async function appWith(log: FastifyBaseLogger) {
  const app = Fastify({ loggerInstance: log, logController: new LogController({ disableRequestLogging: true }) });
  await app.register(async (scope) => {
    scope.setChildLoggerFactory(lazyChildLogger);
    scope.get('/quiet', async () => ({ ok: true }));
    scope.get('/loud', async (req) => {
      req.log.warn({ token: 'S3CRET-0123456789', n: 1 }, 'logged from a request');
      return { ok: true };
    });
  });
  // Fastify makes children of its own while it starts: only a request's count here.
  await app.ready();
  return app;
}

describe('the webhook routes request logger', () => {
  it('makes no child for a request that logs nothing', async () => {
    const { log, lines } = capture();
    const app = await appWith(log as unknown as FastifyBaseLogger);
    const child = vi.spyOn(log, 'child');
    const res = await app.inject({ method: 'GET', url: '/quiet' });
    expect(res.statusCode).toBe(200);
    expect(child).not.toHaveBeenCalled();
    expect(lines).toHaveLength(0);
    await app.close();
  });

  it('logs a line with the request id, redacted, when the request logs', async () => {
    const { log, lines } = capture();
    const app = await appWith(log as unknown as FastifyBaseLogger);
    const child = vi.spyOn(log, 'child');
    const res = await app.inject({ method: 'GET', url: '/loud' });
    expect(res.statusCode).toBe(200);
    expect(child).toHaveBeenCalledTimes(1);
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'logged from a request');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 40, reqId: expect.stringMatching(/^req-/), n: 1, token: '[redacted]' });
    await app.close();
  });
});
