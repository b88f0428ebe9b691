/**
 * GET/POST /login and POST /logout. Signing in exchanges an API key for a session
 * cookie; the key travels only in the POST body and is never echoed, logged or
 * put in a URL. The sign-in form has its own CSRF token (a double-submit cookie),
 * so another site cannot sign a browser in under a key of its choosing.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cameOverHttps, cookie, readCookie } from '../cookies.js';
import type { UiDeps } from '../deps.js';
import { localPath, requireCsrf, requireSession, sameSecret, sessionCookie } from '../session.js';
import { loginPage, type LoginView } from '../views/login.js';

const LOGIN_CSRF_COOKIE = 'adcp_login_csrf';

const REASONS: Record<string, LoginView['notice']> = {
  expired: { tone: 'info', text: 'Your session has expired. Sign in again to continue.' },
  required: { tone: 'info', text: 'Sign in to continue.' },
  signed_out: { tone: 'info', text: 'You are signed out.' },
};

type Form = Record<string, string | undefined>;

export function signInRoutes(app: FastifyInstance, deps: UiDeps): void {
  /** Renders the form with a fresh sign-in CSRF token in a cookie and in the form. */
  const showLogin = (req: FastifyRequest, reply: FastifyReply, status: number, view: Omit<LoginView, 'csrf'>) => {
    const token = randomBytes(24).toString('base64url');
    reply.header('set-cookie', cookie(LOGIN_CSRF_COOKIE, token, { path: '/login', maxAge: 3600, secure: cameOverHttps(req, deps.publicUrl) }));
    return reply.code(status).type('text/html; charset=utf-8').send(loginPage({ ...view, csrf: token }));
  };

  app.get('/', async (_req, reply) => reply.code(303).header('location', '/operations').send());

  app.get('/login', async (req, reply) => {
    const q = req.query as Form;
    return showLogin(req, reply, 200, { next: localPath(q.next), notice: q.reason ? REASONS[q.reason] : undefined });
  });

  app.post('/login', async (req, reply) => {
    const form = (req.body ?? {}) as Form;
    const next = localPath(form.next);
    const expected = readCookie(req, LOGIN_CSRF_COOKIE);
    if (!form._csrf || !expected || !sameSecret(form._csrf, expected)) {
      const text = form._csrf
        ? 'The sign-in form was refused: its CSRF token does not match this browser (the form may be old or come from another site). Try again.'
        : 'The sign-in form was refused: it carried no CSRF token, so it may not come from this dashboard. Try again.';
      return showLogin(req, reply, 403, { next, notice: { tone: 'error', text } });
    }
    const key = typeof form.api_key === 'string' ? form.api_key.trim() : '';
    const holder = key ? await deps.store.tenants.findApiKey(key) : undefined;
    if (!holder) {
      req.log.warn('dashboard sign-in refused: API key not recognised');
      const text = key ? 'That API key was not recognised. Check it and try again.' : 'Enter an API key to sign in.';
      return showLogin(req, reply, 401, { next, notice: { tone: 'error', text } });
    }
    const now = deps.clock.now();
    await deps.store.sessions.sweepExpired(now);
    const session = await deps.store.sessions.open(holder.tenant.id, holder.key.id, deps.sessionTtlMs, now);
    req.log.info({ key_name: holder.key.name, tenant: holder.tenant.name }, 'dashboard sign-in');
    reply.header('set-cookie', [
      // The server ends the session; the browser keeps the cookie a day longer, so that a
      // request after the end can be told "your session expired" rather than "sign in".
      sessionCookie(req, session.token, Math.ceil(deps.sessionTtlMs / 1000) + 86_400, deps.publicUrl),
      cookie(LOGIN_CSRF_COOKIE, '', { path: '/login', maxAge: 0, secure: cameOverHttps(req, deps.publicUrl) }),
    ]);
    return reply.code(303).header('location', next ?? '/operations').send();
  });

  app.post('/logout', { preHandler: [requireSession(deps.store, () => deps.clock.now()), requireCsrf()] }, async (req, reply) => {
    await deps.store.sessions.close(req.uiSession!.token);
    req.log.info({ key_name: req.auth?.keyName }, 'dashboard sign-out');
    reply.header('set-cookie', sessionCookie(req, '', 0, deps.publicUrl));
    return reply.code(303).header('location', '/login?reason=signed_out').send();
  });
}
