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

/** Why a request was not let in, in the words both the API and the MCP endpoint answer with. */
export type AuthRefusal = { code: 'unauthorized'; message: string; wwwAuthenticate: string };

/**
 * The tenant and key an `Authorization: Bearer <api key>` header names, or why not.
 * The API's preHandler and the MCP endpoint both let a request in through here.
 */
export async function authenticate(store: Store, header: unknown): Promise<{ tenant: Tenant; auth: RequestAuth } | AuthRefusal> {
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match) return { code: 'unauthorized', message: 'send Authorization: Bearer <api key>', wwwAuthenticate: 'Bearer' };
  const holder = await store.tenants.findApiKey(match[1]!);
  if (!holder) return { code: 'unauthorized', message: 'API key not recognised', wwwAuthenticate: 'Bearer error="invalid_token"' };
  return {
    tenant: holder.tenant,
    auth: {
      tenantId: holder.tenant.id,
      tenantName: holder.tenant.name,
      keyId: holder.key.id,
      keyName: holder.key.name,
      role: holder.key.role as Role,
    },
  };
}

export function requireApiKey(store: Store) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const found = await authenticate(store, req.headers.authorization);
    if ('code' in found) return reply.code(401).header('WWW-Authenticate', found.wwwAuthenticate).send(errorBody(found.code, found.message));
    req.tenant = found.tenant;
    req.auth = found.auth;
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
      return reply.code(403).send(errorBody('forbidden', roleRefusal(need, auth)));
    }
  };
  roleChecks.add(check);
  return check;
}

/** What a key without the role an action needs is told (the API's 403, the MCP tools' `forbidden`). */
export function roleRefusal(need: Role, auth: Pick<RequestAuth, 'keyName' | 'role'>): string {
  return `this action needs the ${need} role; key '${auth.keyName}' has ${auth.role}`;
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
