/**
 * GET /v1/settings, PUT /v1/settings: the tenant's own rules: the spend approval
 * threshold, how long each kind of request may wait for a person
 * (`input_expiry`, src/domain/input-timers.ts), when a live buy is under- or
 * over-pacing (`pacing`), and the reporting webhook asked by default (`reporting`:
 * its frequency, and whether governed buys carry one or are polled).
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Store } from '../../store/index.js';
import type { StoredSettings, TenantSettings } from '../../store/settings-repo.js';
import { EXPIRY_ACTIONS, EXPIRY_MAX_MS, EXPIRY_MIN_MS } from '../../domain/input-timers.js';
import { DEFAULT_PACING, pacingThresholdProblem } from '../../domain/pacing.js';
import { DEFAULT_REPORTING_FREQUENCY, GOVERNED_REPORTING, REPORTING_FREQUENCIES } from '../../domain/reporting-webhook.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';

const ExpiryRuleInput = z
  .object({
    after_ms: z.number().int().min(EXPIRY_MIN_MS).max(EXPIRY_MAX_MS),
    then: z.enum(EXPIRY_ACTIONS),
  })
  .strict();

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
    input_expiry: z
      .object({
        spend_approval: ExpiryRuleInput.optional(),
        seller_input: ExpiryRuleInput.optional(),
        governance_conditions: ExpiryRuleInput.optional(),
      })
      .strict()
      .nullable()
      .optional(),
    /** When a live buy is under- or over-pacing (src/domain/pacing.ts); left out, the defaults. */
    pacing: z
      .object({ under: z.number().finite(), over: z.number().finite(), min_elapsed: z.number().finite() })
      .strict()
      .superRefine((t, ctx) => {
        const problem = pacingThresholdProblem(t);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .nullable()
      .optional(),
    /**
     * The reporting frequency asked of sellers when a buy does not say (default daily), and
     * whether governed buys carry our reporting webhook (`webhook`, the default: its secret is
     * part of what the governance agent checks) or are polled (`polling`: no webhook at all).
     */
    reporting: z
      .object({ frequency: z.enum(REPORTING_FREQUENCIES).optional(), governed_buys: z.enum(GOVERNED_REPORTING).optional() })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();

function present(s: StoredSettings) {
  return {
    approval_over: s.settings.approval_over ?? null,
    input_expiry: s.settings.input_expiry ?? null,
    // What applies, defaults included, so a reader need not know them.
    pacing: s.settings.pacing ?? DEFAULT_PACING,
    reporting: { frequency: s.settings.reporting?.frequency ?? DEFAULT_REPORTING_FREQUENCY, governed_buys: s.settings.reporting?.governed_buys ?? 'webhook' },
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
      const settings: TenantSettings = {};
      if (req.body.approval_over) settings.approval_over = req.body.approval_over;
      // Kinds left out never expire; an empty rule set is no rule at all.
      const expiry = Object.fromEntries(Object.entries(req.body.input_expiry ?? {}).filter(([, rule]) => rule !== undefined));
      if (Object.keys(expiry).length > 0) settings.input_expiry = expiry;
      if (req.body.pacing) settings.pacing = req.body.pacing;
      if (req.body.reporting) {
        const { frequency, governed_buys } = req.body.reporting;
        settings.reporting = { ...(frequency ? { frequency } : {}), ...(governed_buys ? { governed_buys } : {}) };
      }
      return present(await deps.store.settings.put(tenantOf(req).id, settings, actorOf(req)));
    },
  );
}
