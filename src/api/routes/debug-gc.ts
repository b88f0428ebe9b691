/**
 * POST /debug/gc — for benchmarks only (bench/soak.ts), off by default.
 *
 * Runs a full garbage collection and answers the process's memory right after,
 * so a long run can tell heap that is still referenced (a leak) from garbage
 * not yet collected. Present only when ADCP_ORCH_DEBUG_GC is set and Node was
 * started with `--expose-gc`; needs an admin key. A collection stops the process
 * for tens of milliseconds, which is why it is nothing to leave on in production.
 */
import type { FastifyInstance } from 'fastify';
import { getHeapSpaceStatistics } from 'node:v8';
import type { Store } from '../../store/index.js';
import { requireApiKey, requireRole } from '../auth.js';

type Gc = () => void;

/** The exposed collector; throws when Node was started without --expose-gc. Called before anything is opened. */
export function exposedGc(): Gc {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (typeof gc !== 'function') {
    throw new Error('ADCP_ORCH_DEBUG_GC needs Node started with --expose-gc (e.g. node --expose-gc bin/adcp-orchestrator.js serve)');
  }
  return gc;
}

export function debugGcRoutes(app: FastifyInstance, deps: { store: Store }): void {
  const gc = exposedGc();
  app.post('/debug/gc', { schema: { hide: true }, preHandler: [requireApiKey(deps.store), requireRole('admin')] }, async () => {
    const started = performance.now();
    // Twice: the first run queues finalizers and weak callbacks whose memory the second frees.
    gc();
    gc();
    const gcMs = performance.now() - started;
    const m = process.memoryUsage();
    return {
      heap_used_bytes: m.heapUsed,
      heap_total_bytes: m.heapTotal,
      rss_bytes: m.rss,
      external_bytes: m.external,
      array_buffers_bytes: m.arrayBuffers,
      gc_ms: Math.round(gcMs * 10) / 10,
      // Per V8 space: code_space is compiled code (it grows while the JIT warms up),
      // the others are data, which is where a leak would show.
      heap_spaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size])),
    };
  });
}
