/** GET /v1/settings, PUT /v1/settings: the tenant's own rules (the spend approval threshold). */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Store } from '../../store/index.js';
import type { StoredSettings } from '../../store/settings-repo.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';

const SettingsInput = z
  .object({
    approval_over: z
      .object({
        amount: z.number().finite().min(0),
        currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD'),
      })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();

function present(s: StoredSettings) {
  return {
    approval_over: s.settings.approval_over ?? null,
    updated_at: s.updated_at === null ? null : new Date(s.updated_at).toISOString(),
    updated_by: s.updated_by,
  };
}

export function settingsRoutes(app: FastifyInstance, deps: { store: Store }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireApiKey(deps.store);

  r.get('/v1/settings', { schema: { tags: ['settings'], summary: "The tenant's settings" }, preHandler: [auth, requireRole('viewer')] }, async (req) =>
    present(await deps.store.settings.get(tenantOf(req).id)),
  );

  r.put(
    '/v1/settings',
    { schema: { body: SettingsInput, tags: ['settings'], summary: "Replace the tenant's settings" }, preHandler: [auth, requireRole('admin')] },
    // A PUT replaces the whole document: repeating it is harmless, so no Idempotency-Key is needed.
    async (req) => {
      const approvalOver = req.body.approval_over ?? undefined;
      return present(await deps.store.settings.put(tenantOf(req).id, approvalOver ? { approval_over: approvalOver } : {}, actorOf(req)));
    },
  );
}
