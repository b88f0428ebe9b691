/** Liveness, readiness and metrics. */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Metrics } from '../../engine/metrics.js';
import type { Store } from '../../store/index.js';

export function healthRoutes(app: FastifyInstance, deps: { store: Store; metrics: Metrics; isReady: () => boolean }): void {
  app.get('/healthz', { schema: { tags: ['health'] } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { tags: ['health'] } }, async (_req, reply) => {
    try {
      await sql`SELECT 1`.execute(deps.store.db.kysely);
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: 'unreachable' });
    }
    if (!deps.isReady()) return reply.code(503).send({ status: 'starting' });
    return { status: 'ready', database: deps.store.db.dialect };
  });

  app.get('/metrics', { schema: { tags: ['health'] } }, async (_req, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
