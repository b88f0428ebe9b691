/**
 * The dashboard (README.md, Dashboard), registered on the API's Fastify app in a scope
 * of its own: form bodies, HTML error pages, security headers and server timing
 * apply to its routes only, never to /v1.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { assetRoutes } from './assets.js';
import type { UiDeps } from './deps.js';
import { agentsPages } from './routes/agents.js';
import { campaignsPages } from './routes/campaigns.js';
import { inboxPages } from './routes/inbox.js';
import { liveStreamRoutes } from './routes/live-stream.js';
import { mediaBuysPages } from './routes/media-buys.js';
import { operationsPages } from './routes/operations.js';
import { signInRoutes } from './routes/sign-in.js';
import { subscriptionsPages } from './routes/subscriptions.js';
import { messagePage } from './views/message.js';
import { databaseUnavailableAnswer } from '../api/errors.js';

/** Scripts, styles and connections from this origin only; nothing inline, no framing. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

declare module 'fastify' {
  interface FastifyRequest {
    uiStartedAt?: bigint;
  }
}

export function dashboardRoutes(deps: UiDeps) {
  return async (app: FastifyInstance) => {
    await app.register(async (scope) => {
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 256 * 1024 }, (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      scope.addHook('onRequest', async (req) => {
        req.uiStartedAt = process.hrtime.bigint();
      });
      scope.addHook('onSend', async (req, reply, payload) => {
        reply.header('content-security-policy', CSP);
        reply.header('x-content-type-options', 'nosniff');
        reply.header('x-frame-options', 'DENY');
        reply.header('referrer-policy', 'same-origin');
        if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
        if (req.uiStartedAt !== undefined) {
          // Server time, for the bench and for a person's browser tools.
          const ms = Number(process.hrtime.bigint() - req.uiStartedAt) / 1e6;
          reply.header('server-timing', `app;dur=${ms.toFixed(2)}`);
        }
        return payload;
      });
      scope.setErrorHandler((err: FastifyError, req, reply) => {
        const away = databaseUnavailableAnswer(err, 'dashboard', deps.outage);
        if (away) {
          const page = messagePage({
            title: 'Database unavailable',
            message:
              'The orchestrator cannot reach its database just now, so nothing was shown or changed. Work already accepted is kept ' +
              'and resumes by itself when the database is back. Try again in a few seconds.',
            // A page read again is the same request; a form is not resent by a link.
            link: { href: req.method === 'GET' && req.url.startsWith('/') && !req.url.startsWith('//') ? req.url : '/operations', text: 'Try again' },
          });
          return reply.code(away.statusCode).headers(away.headers).type('text/html; charset=utf-8').send(page);
        }
        const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
        if (status === 500) req.log.error({ err }, 'dashboard: unhandled error');
        const message = status === 500 ? 'Something went wrong on our side; it has been logged. Try again.' : err.message;
        return reply.code(status).type('text/html; charset=utf-8').send(messagePage({ title: status === 500 ? 'Error' : 'Bad request', message, link: { href: '/operations', text: 'Back to operations' } }));
      });
      signInRoutes(scope, deps);
      operationsPages(scope, deps);
      inboxPages(scope, deps);
      if (deps.mediaBuys) mediaBuysPages(scope, { ...deps, mediaBuys: deps.mediaBuys });
      campaignsPages(scope, deps);
      agentsPages(scope, deps);
      subscriptionsPages(scope, deps);
      liveStreamRoutes(scope, deps);
      assetRoutes(scope);
    });
  };
}
