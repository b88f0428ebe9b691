/**
 * One error shape for every route: `{"error": {"code", "message", "details"?}}`.
 * Validation failures, malformed JSON and unknown routes are mapped here so a
 * client never sees Fastify's own shapes.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { EngineError } from '../engine/errors.js';
import { RETRY_AFTER_S, type DatabaseOutage, type OutagePlace } from '../engine/database-outage.js';
import { databaseUnavailable } from '../store/db-errors.js';

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export function errorBody(code: string, message: string, details?: unknown) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

export const DATABASE_UNAVAILABLE_MESSAGE = 'the database is unavailable; nothing was done, try again shortly';

/**
 * When `err` says the database is away: counted and logged (once per outage) by
 * `outage`, and the status, headers and body to answer with (503, Retry-After).
 * Undefined for any other error. The dashboard renders the same answer as a page.
 */
export function databaseUnavailableAnswer(err: unknown, where: OutagePlace, outage: DatabaseOutage | undefined) {
  if (!databaseUnavailable(err)) return undefined;
  outage?.failed(where, err);
  return { statusCode: 503, headers: { 'retry-after': String(RETRY_AFTER_S) }, body: errorBody('database_unavailable', DATABASE_UNAVAILABLE_MESSAGE) };
}

export function installErrorHandling(app: FastifyInstance, outage?: DatabaseOutage): void {
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody('route_not_found', `no route ${req.method} ${req.url.split('?')[0]}`));
  });
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) return reply.code(err.statusCode).send(errorBody(err.code, err.message, err.details));
    if (err instanceof EngineError) return reply.code(err.httpStatus).send(errorBody(err.code, err.message, err.details));
    // Nothing was acknowledged (a webhook is never 2xx unless stored): the client, or the seller, tries again later.
    const away = databaseUnavailableAnswer(err, req.url.startsWith('/webhooks/') ? 'webhook' : 'api', outage);
    if (away) return reply.code(away.statusCode).headers(away.headers).send(away.body);
    if (hasZodFastifySchemaValidationErrors(err)) {
      const details = err.validation.map((v) => ({
        where: err.validationContext,
        path: v.instancePath || '/',
        message: v.message,
      }));
      const first = details[0];
      return reply
        .code(400)
        .send(errorBody('invalid_request', `${err.validationContext} ${first?.path ?? ''}: ${first?.message ?? 'invalid'}`.trim(), details));
    }
    switch (err.code) {
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return reply.code(400).send(errorBody('invalid_json', 'request body is not valid JSON'));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send(errorBody('unsupported_media_type', 'send Content-Type: application/json'));
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send(errorBody('payload_too_large', 'request body is too large'));
    }
    if (err instanceof SyntaxError) return reply.code(400).send(errorBody('invalid_json', 'request body is not valid JSON'));
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'unhandled error');
    return reply.code(status).send(errorBody(status === 500 ? 'internal_error' : 'bad_request', status === 500 ? 'internal error' : err.message));
  });
}
