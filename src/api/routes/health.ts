/** Liveness, readiness and metrics. */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Metrics } from '../../engine/metrics.js';
import type { Store } from '../../store/index.js';
import type { InstanceView } from '../../store/instances-repo.js';

export function healthRoutes(
  app: FastifyInstance,
  deps: { store: Store; metrics: Metrics; isReady: () => boolean; instances?: () => Promise<InstanceView[]> },
): void {
  app.get('/healthz', { schema: { tags: ['health'] } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { tags: ['health'] } }, async (_req, reply) => {
    try {
      await sql`SELECT 1`.execute(deps.store.db.kysely);
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: 'unreachable' });
    }
    if (!deps.isReady()) return reply.code(503).send({ status: 'starting' });
    // The instances serving this database (one on SQLite), with how long ago each last said it was alive.
    const instances = deps.instances ? await deps.instances() : undefined;
    return {
      status: 'ready',
      database: deps.store.db.dialect,
      ...(instances && {
        instances: instances.map((i) => ({ id: i.id, pid: i.pid, hostname: i.hostname, url: i.url, started_at: i.started_at, heartbeat_age_ms: Math.max(0, i.age_ms) })),
      }),
    };
  });

  app.get('/metrics', { schema: { tags: ['health'] } }, async (_req, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
