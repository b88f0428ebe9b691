/**
 * Dashboard sign-in: a session cookie stands for the API key a person signed in
 * with, and every form carries a CSRF token derived from that session.
 *
 * The cookie is HttpOnly and SameSite=Strict (Secure over HTTPS) and holds a random
 * token whose hash is all the database keeps. A request with a live session gets
 * the same `req.auth` an API request gets (the key's tenant, name and role), so the
 * dashboard acts with exactly the key's rights and records its name as the actor.
 *
 * The CSRF token is an HMAC of the session token: only a page we served to this
 * browser can know it (the cookie itself is unreadable to scripts and is never sent
 * by other sites' pages), and nothing extra has to be stored.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { roleAtLeast, type Role } from '../domain/roles.js';
import type { Store } from '../store/index.js';
import { cameOverHttps, cookie, readCookie } from './cookies.js';
import { messagePage } from './views/message.js';

export const SESSION_COOKIE = 'adcp_session';

export interface UiSession {
  token: string;
  /** The CSRF token every form of this session carries. */
  csrf: string;
  expiresAt: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    uiSession?: UiSession;
  }
}

export function csrfFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('adcp-orchestrator dashboard csrf v1').digest('base64url');
}

export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function sessionCookie(req: FastifyRequest, token: string, maxAgeSeconds: number, publicUrl: string | undefined): string {
  return cookie(SESSION_COOKIE, token, { path: '/', maxAge: maxAgeSeconds, secure: cameOverHttps(req, publicUrl) });
}

/** Only our own paths, so a crafted link cannot send a person elsewhere after signing in. */
export function localPath(next: unknown): string | undefined {
  return typeof next === 'string' && /^\/(?![/\\])[^\s]*$/.test(next) && next.length <= 2000 ? next : undefined;
}

/** Why a request has no session, in the words the sign-in page shows. */
export type SignedOutReason = 'expired' | 'required';

function refuse(req: FastifyRequest, reply: FastifyReply, reason: SignedOutReason) {
  const next = req.method === 'GET' && !req.headers['hx-request'] ? localPath(req.url) : undefined;
  const login = `/login?reason=${reason}${next && next !== '/' ? `&next=${encodeURIComponent(next)}` : ''}`;
  if (req.headers['hx-request']) {
    // A live refresh found the session gone: htmx takes the whole page to sign-in.
    return reply.code(401).header('HX-Redirect', login).send('');
  }
  if (req.method === 'GET' && req.headers.accept !== 'text/event-stream') return reply.code(303).header('location', login).send();
  const message =
    reason === 'expired'
      ? 'Your session has expired, so this was not done. Sign in again and repeat it.'
      : 'You are not signed in, so this was not done. Sign in and repeat it.';
  return reply.code(401).type('text/html; charset=utf-8').send(messagePage({ title: reason === 'expired' ? 'Session expired' : 'Not signed in', message, link: { href: login, text: 'Sign in' } }));
}

/** A preHandler: the request must carry a live session; it then acts as the session's key. */
export function requireSession(store: Store, now: () => number = Date.now): preHandlerAsyncHookHandler {
  return async (req, reply) => {
    const token = readCookie(req, SESSION_COOKIE);
    if (!token) return refuse(req, reply, 'required');
    const found = await store.sessions.lookup(token, now());
    if (found.state !== 'active') return refuse(req, reply, found.state === 'expired' ? 'expired' : 'required');
    const { tenant, key } = found.holder;
    req.tenant = tenant;
    req.auth = { tenantId: tenant.id, tenantName: tenant.name, keyId: key.id, keyName: key.name, role: key.role as Role };
    req.uiSession = { token, csrf: csrfFor(token), expiresAt: found.expiresAt };
  };
}

/** The CSRF token a form or an htmx request carries: the `_csrf` field or the X-CSRF-Token header. */
function csrfGiven(req: FastifyRequest): string | undefined {
  const header = req.headers['x-csrf-token'];
  if (typeof header === 'string' && header !== '') return header;
  const body = req.body as Record<string, unknown> | undefined;
  const field = body && typeof body === 'object' ? body._csrf : undefined;
  return typeof field === 'string' && field !== '' ? field : undefined;
}

/** A preHandler after requireSession, on every route that changes something. */
export function requireCsrf(): preHandlerAsyncHookHandler {
  return async (req, reply) => {
    const session = req.uiSession;
    if (!session) throw new Error('requireCsrf registered without requireSession');
    const given = csrfGiven(req);
    if (given && sameSecret(given, session.csrf)) return;
    const message = given
      ? 'This form was refused: its CSRF token does not belong to your session (it may come from an older sign-in or another site). Reload the page and submit it again.'
      : 'This form was refused: it carried no CSRF token, so it may not come from this dashboard. Reload the page and submit it again.';
    return reply.code(403).type('text/html; charset=utf-8').send(messagePage({ title: 'Form refused', message, link: { href: '/operations', text: 'Back to operations' } }));
  };
}

/** A preHandler after requireSession: the same rule as the API's requireRole, answered as a page. */
export function requireUiRole(need: Role): preHandlerAsyncHookHandler {
  return async (req, reply) => {
    const auth = req.auth;
    if (auth && roleAtLeast(auth.role, need)) return;
    const message = `This action needs the ${need} role; key '${auth?.keyName ?? '?'}' has ${auth?.role ?? 'no role'}. Nothing was changed.`;
    return reply.code(403).type('text/html; charset=utf-8').send(messagePage({ title: 'Not allowed', message, link: { href: '/operations', text: 'Back to operations' } }));
  };
}
