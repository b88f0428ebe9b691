/**
 * One error shape for every route: `{"error": {"code", "message", "details"?}}`.
 * Validation failures, malformed JSON and unknown routes are mapped here so a
 * client never sees Fastify's own shapes.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { EngineError } from '../engine/errors.js';

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

export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody('route_not_found', `no route ${req.method} ${req.url.split('?')[0]}`));
  });
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) return reply.code(err.statusCode).send(errorBody(err.code, err.message, err.details));
    if (err instanceof EngineError) return reply.code(err.httpStatus).send(errorBody(err.code, err.message, err.details));
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
