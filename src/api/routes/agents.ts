/** POST /v1/agents, GET /v1/agents, GET /v1/agents/:id, PATCH /v1/agents/:id, POST /v1/agents/:id/refresh */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Store } from '../../store/index.js';
import type { SecretBox } from '../../store/secret-box.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';
import type { AnswerService } from '../../engine/answer-service.js';
import type { AgentCapabilitiesService } from '../../engine/agent-capabilities.js';
import { ApiError } from '../errors.js';
import { idempotent } from '../idempotency.js';
import { presentAgent } from '../present.js';
import { SELLER_CREDENTIALS_RE } from '../../domain/governance-sync.js';

/**
 * A governance agent's credentials for sellers: what a governance-aware seller presents when
 * it calls the agent (sync_governance `authentication`, Bearer). Issued by the governance
 * agent; AdCP wants at least 32 characters; sealed, never shown.
 */
const SellerCredentials = z.string().regex(SELLER_CREDENTIALS_RE, 'must be 32 to 4096 printable characters without spaces (sent by sellers as a Bearer token)');

// No `user:password@`: a credential there would be stored and shown in clear (tokens go in `auth`, sealed).
const httpUrl = z
  .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
  .refine((u) => !URL.canParse(u) || (new URL(u).username === '' && new URL(u).password === ''), { message: 'must not carry credentials (user:password@); give a token in auth' });

export const AgentInput = z
  .object({
    name: z.string().min(1).max(200),
    role: z.enum(['seller', 'governance']),
    url: httpUrl,
    protocol: z.enum(['mcp', 'a2a']),
    auth: z.object({ scheme: z.literal('bearer'), token: z.string().min(1).max(4096) }).strict().optional(),
    webhook_signing: z
      .object({
        jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) }).optional(),
        jwks_uri: httpUrl.optional(),
        brand_json_url: httpUrl.optional(),
      })
      .strict()
      .refine((w) => w.jwks || w.jwks_uri || w.brand_json_url, { message: 'give one of jwks, jwks_uri, brand_json_url' })
      .optional(),
    seller_credentials: SellerCredentials.optional(),
  })
  .strict()
  .refine((a) => a.seller_credentials === undefined || a.role === 'governance', { message: 'seller_credentials are for a governance agent', path: ['seller_credentials'] });

const IdParams = z.object({ id: z.string().min(1).max(100) });

/** New credentials for an agent; `auth: null` removes them. A governance agent's `seller_credentials` likewise. */
const AgentPatch = z
  .object({
    auth: z.object({ scheme: z.literal('bearer'), token: z.string().min(1).max(4096) }).strict().nullable().optional(),
    seller_credentials: SellerCredentials.nullable().optional(),
  })
  .strict()
  .refine((p) => p.auth !== undefined || p.seller_credentials !== undefined, { message: 'give auth, seller_credentials, or both' });

export function agentRoutes(app: FastifyInstance, deps: { store: Store; secrets: SecretBox; answers?: AnswerService; capabilities?: AgentCapabilitiesService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireApiKey(deps.store);
  const asViewer = [auth, requireRole('viewer')];
  const asAdmin = [auth, requireRole('admin')];

  r.post('/v1/agents', { schema: { body: AgentInput, tags: ['agents'], summary: 'Register an agent' }, preHandler: asAdmin }, async (req, reply) => {
    const tenant = tenantOf(req);
    return idempotent(deps.store, req, reply, tenant.id, async () => {
      const b = req.body;
      const row = await deps.store.agents.insert({
        tenantId: tenant.id,
        name: b.name,
        role: b.role,
        url: b.url,
        protocol: b.protocol,
        authTokenSealed: b.auth ? deps.secrets.seal(b.auth.token) : null,
        webhookSigning: b.webhook_signing,
        sellerCredentialsSealed: b.seller_credentials ? deps.secrets.seal(b.seller_credentials) : null,
      });
      // Asked at once what it supports: the version we speak with it follows (an agent that cannot
      // be reached is registered all the same, its capabilities asked again on the next round).
      const asked = deps.capabilities ? await deps.capabilities.refresh(row) : row;
      return { statusCode: 201, body: presentAgent(asked) };
    });
  });

  r.patch(
    '/v1/agents/:id',
    { schema: { params: IdParams, body: AgentPatch, tags: ['agents'], summary: "Update an agent's credentials; its auth-required operations are retried" }, preHandler: asAdmin },
    async (req) => {
      const tenant = tenantOf(req);
      const agent = await deps.store.agents.getForTenant(tenant.id, req.params.id);
      if (!agent) throw new ApiError(404, 'agent_not_found', `agent ${req.params.id} not found`);
      const { auth, seller_credentials: sellerCredentials } = req.body;
      if (sellerCredentials !== undefined && agent.role !== 'governance') throw new ApiError(400, 'not_a_governance_agent', `seller_credentials are for a governance agent; ${agent.name} is a ${agent.role} agent`);
      let updated = agent;
      if (auth !== undefined) {
        const sealed = auth ? deps.secrets.seal(auth.token) : null;
        await deps.store.agents.updateCredentials(agent.id, sealed);
        updated = { ...updated, auth_token_enc: sealed };
      }
      if (sellerCredentials !== undefined) {
        // New credentials make every seller's registration of this agent stale: sent again before its next governed buy.
        const sealed = sellerCredentials ? deps.secrets.seal(sellerCredentials) : null;
        await deps.store.agents.updateSellerCredentials(agent.id, sealed);
        updated = { ...updated, seller_credentials_enc: sealed };
      }
      const retried = auth && deps.answers ? await deps.answers.retryAfterCredentials(tenant.id, agent.id, actorOf(req)) : [];
      req.log.info({ agent_id: agent.id, actor: actorOf(req), retried: retried.length, seller_credentials_changed: sellerCredentials !== undefined }, 'agent credentials updated');
      return { ...presentAgent(updated), retried_operations: retried };
    },
  );

  r.post(
    '/v1/agents/:id/refresh',
    { schema: { params: IdParams, tags: ['agents'], summary: 'Ask the agent for its capabilities now' }, preHandler: asAdmin },
    async (req) => {
      const tenant = tenantOf(req);
      const agent = await deps.store.agents.getForTenant(tenant.id, req.params.id);
      if (!agent) throw new ApiError(404, 'agent_not_found', `agent ${req.params.id} not found`);
      if (!deps.capabilities) throw new ApiError(501, 'not_supported', 'this process does not ask agents for their capabilities');
      const asked = await deps.capabilities.refresh(agent);
      req.log.info({ agent_id: agent.id, actor: actorOf(req), adcp_version: asked.adcp_version }, 'agent capabilities refreshed');
      return presentAgent(asked);
    },
  );

  r.get('/v1/agents', { schema: { tags: ['agents'], summary: 'List agents' }, preHandler: asViewer }, async (req) => {
    const rows = await deps.store.agents.list(tenantOf(req).id);
    return { agents: rows.map(presentAgent) };
  });

  r.get('/v1/agents/:id', { schema: { params: IdParams, tags: ['agents'], summary: 'Show an agent' }, preHandler: asViewer }, async (req) => {
    const row = await deps.store.agents.getForTenant(tenantOf(req).id, req.params.id);
    if (!row) throw new ApiError(404, 'agent_not_found', `agent ${req.params.id} not found`);
    return presentAgent(row);
  });
}
