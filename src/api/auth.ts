/**
 * API-key authentication and roles for /v1: `Authorization: Bearer <key>` names
 * exactly one tenant and one key, and the key's role decides what it may do.
 */
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { roleAtLeast, type Role } from '../domain/roles.js';
import type { Tenant } from '../store/tenants-repo.js';
import type { Store } from '../store/index.js';
import { errorBody } from './errors.js';

export type { Role } from '../domain/roles.js';
export { roleAtLeast } from '../domain/roles.js';

/** Who made the request. `role` is a Role unless the stored one is unknown to this version (then it grants nothing). */
export interface RequestAuth {
  tenantId: string;
  tenantName: string;
  keyId: string;
  keyName: string;
  role: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    tenant?: Tenant;
    auth?: RequestAuth;
  }
}

export function requireApiKey(store: Store) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      return reply.code(401).header('WWW-Authenticate', 'Bearer').send(errorBody('unauthorized', 'send Authorization: Bearer <api key>'));
    }
    const holder = await store.tenants.findApiKey(match[1]!);
    if (!holder) {
      return reply.code(401).header('WWW-Authenticate', 'Bearer error="invalid_token"').send(errorBody('unauthorized', 'API key not recognised'));
    }
    req.tenant = holder.tenant;
    req.auth = {
      tenantId: holder.tenant.id,
      tenantName: holder.tenant.name,
      keyId: holder.key.id,
      keyName: holder.key.name,
      role: holder.key.role as Role,
    };
  };
}

/** The role checks made by requireRole, so that the API can refuse to start with a /v1 route that has none. */
const roleChecks = new WeakSet<object>();

/**
 * A preHandler, after requireApiKey: answers 403 `forbidden` unless the key's role is
 * at least `need`. It runs before the handler, so a refused request does nothing at all
 * (not even reserve its Idempotency-Key).
 */
export function requireRole(need: Role): preHandlerAsyncHookHandler {
  const check = async (req: FastifyRequest, reply: FastifyReply) => {
    const auth = authOf(req);
    if (!roleAtLeast(auth.role, need)) {
      return reply.code(403).send(errorBody('forbidden', `this action needs the ${need} role; key '${auth.keyName}' has ${auth.role}`));
    }
  };
  roleChecks.add(check);
  return check;
}

/** Whether a route's preHandler (one function or a list) includes a requireRole check. */
export function hasRoleCheck(preHandler: unknown): boolean {
  const hooks = Array.isArray(preHandler) ? preHandler : [preHandler];
  return hooks.some((h) => typeof h === 'function' && roleChecks.has(h));
}

export function authOf(req: FastifyRequest): RequestAuth {
  if (!req.auth) throw new Error('route registered without requireApiKey');
  return req.auth;
}

/** The actor recorded in events a request causes: the key's name. */
export function actorOf(req: FastifyRequest): string {
  return authOf(req).keyName;
}

export function tenantOf(req: FastifyRequest): Tenant {
  if (!req.tenant) throw new Error('route registered without requireApiKey');
  return req.tenant;
}
