/** GET /agents. */
import type { FastifyInstance } from 'fastify';
import { DashboardReads } from '../../store/dashboard-reads.js';
import type { UiDeps } from '../deps.js';
import { sendPage } from '../page.js';
import { requireSession } from '../session.js';
import { agentsPage } from '../views/agents.js';

export function agentsPages(app: FastifyInstance, deps: UiDeps): void {
  const reads = new DashboardReads(deps.store.db);
  app.get('/agents', { preHandler: requireSession(deps.store, () => deps.clock.now()) }, async (req, reply) => {
    const agents = await deps.store.agents.list(req.auth!.tenantId);
    return sendPage(req, reply, deps, reads, { title: 'Agents', section: 'agents', body: agentsPage(agents, deps.clock.now()) });
  });
}
