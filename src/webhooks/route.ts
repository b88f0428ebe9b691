/**
 * POST /webhooks/adcp/:token. No API key: the sender is authenticated per the
 * mode registered for that operation. The body is taken raw (the signature and
 * digest cover the exact bytes), so this route has its own content parser.
 */
import type { FastifyInstance } from 'fastify';
import { MAX_WEBHOOK_BYTES, type WebhookReceiver } from './receiver.js';

export function webhookRoutes(receiver: WebhookReceiver, publicUrl: string | undefined) {
  return async (app: FastifyInstance) => {
    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      // Accept any type and more than the limit, so the receiver itself answers 415/413 in the spec's order.
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_WEBHOOK_BYTES * 2 }, (_req, body, done) => done(null, body));
      scope.post<{ Params: { token: string } }>('/webhooks/adcp/:token', { schema: { hide: true } }, async (req, reply) => {
        // The sender signed the URL we registered: our public base plus this path (and any query).
        const base = publicUrl ?? `${req.protocol}://${req.headers.host ?? 'localhost'}`;
        const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
        const answer = await receiver.receive({
          token: req.params.token,
          method: req.method,
          targetUrl: `${base}/webhooks/adcp/${encodeURIComponent(req.params.token)}${query}`,
          headers: req.headers,
          rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
        });
        if (answer.headers) reply.headers(answer.headers);
        return reply.code(answer.statusCode).send(answer.body);
      });
    });
  };
}
