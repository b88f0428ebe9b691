/** API-key authentication for /v1: `Authorization: Bearer <key>` names exactly one tenant. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Tenant } from '../store/tenants-repo.js';
import type { Store } from '../store/index.js';
import { errorBody } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    tenant?: Tenant;
  }
}

export function requireApiKey(store: Store) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      return reply.code(401).header('WWW-Authenticate', 'Bearer').send(errorBody('unauthorized', 'send Authorization: Bearer <api key>'));
    }
    const tenant = await store.tenants.findTenantByApiKey(match[1]);
    if (!tenant) {
      return reply.code(401).header('WWW-Authenticate', 'Bearer error="invalid_token"').send(errorBody('unauthorized', 'API key not recognised'));
    }
    req.tenant = tenant;
  };
}

export function tenantOf(req: FastifyRequest): Tenant {
  if (!req.tenant) throw new Error('route registered without requireApiKey');
  return req.tenant;
}

/*
 * Interim until the roles work lands on main (ISSUE 8 interfaces: keys with a name
 * and a role). Same names and shapes as that interface; replaced by it on merge.
 */
export type Role = 'viewer' | 'operator' | 'approver' | 'admin';

export function requireRole(_need: Role) {
  return async (_req: FastifyRequest, _reply: FastifyReply) => {};
}

/** Who did it: the key's name. */
export function actorOf(req: FastifyRequest): string {
  return `key-of-${tenantOf(req).name}`;
}
