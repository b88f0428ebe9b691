/** Structured logs (pino). Anything that could carry a secret is redacted at the source. */
import pino, { type Logger } from 'pino';

export function createLogger(level: string, opts: { destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      level,
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          '*.authToken',
          '*.auth_token_enc',
          '*.webhook_secret_enc',
          '*.credentials',
          '*.authentication.credentials',
          '*.token',
          'apiKey',
          'secret',
        ],
        censor: '[redacted]',
      },
    },
    opts.destination,
  );
}
