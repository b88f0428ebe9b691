/**
 * POST /webhooks/adcp/:token (operation webhooks) and POST
 * /webhooks/adcp/reporting/:token (a live buy's reporting fires). No API key: the
 * sender is authenticated per the mode registered for that operation or buy. The
 * body is taken raw (the signature and digest cover the exact bytes), so these
 * routes have their own content parser.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_WEBHOOK_BYTES, type InboundWebhook, type WebhookAnswer, type WebhookReceiver } from './receiver.js';
import type { ReportingReceiver } from './reporting-receiver.js';
import { lazyChildLogger } from './lazy-child-logger.js';

export function webhookRoutes(receiver: WebhookReceiver, publicUrl: string | undefined, reporting?: ReportingReceiver) {
  /** What the sender signed: the URL we registered, our public base plus this path (and any query). */
  const inbound = (req: FastifyRequest<{ Params: { token: string } }>, path: string): InboundWebhook => {
    const base = publicUrl ?? `${req.protocol}://${req.headers.host ?? 'localhost'}`;
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
    return {
      token: req.params.token,
      method: req.method,
      targetUrl: `${base}${path}${encodeURIComponent(req.params.token)}${query}`,
      headers: req.headers,
      rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
    };
  };
  const send = (reply: FastifyReply, answer: WebhookAnswer) => {
    if (answer.headers) reply.headers(answer.headers);
    return reply.code(answer.statusCode).send(answer.body);
  };
  return async (app: FastifyInstance) => {
    await app.register(async (scope) => {
      // These requests log nothing on their way to the answer: their logger is made only if one does.
      scope.setChildLoggerFactory(lazyChildLogger);
      scope.removeAllContentTypeParsers();
      // Accept any type and more than the limit, so the receiver itself answers 415/413 in the spec's order.
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_WEBHOOK_BYTES * 2 }, (_req, body, done) => done(null, body));
      scope.post<{ Params: { token: string } }>('/webhooks/adcp/:token', { schema: { hide: true } }, async (req, reply) =>
        send(reply, await receiver.receive(inbound(req, '/webhooks/adcp/'))),
      );
      if (reporting) {
        scope.post<{ Params: { token: string } }>('/webhooks/adcp/reporting/:token', { schema: { hide: true } }, async (req, reply) =>
          send(reply, await reporting.receive(inbound(req, '/webhooks/adcp/reporting/'))),
        );
      }
    });
  };
}
