/**
 * Structured logs (pino). Anything that could carry a secret is redacted at the source.
 *
 * People read a terminal, machines read JSON: when standard output is a terminal (and
 * LOG_FORMAT is not `json`) lines are made readable by pino-pretty; otherwise, and always
 * with LOG_FORMAT=json, each line is one JSON object.
 */
import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';

export type LogFormat = 'auto' | 'json' | 'pretty';

export interface LoggerOptions {
  destination?: pino.DestinationStream;
  format?: LogFormat;
  /** Whether standard output is a terminal (a parameter so that tests can say so). */
  isTty?: boolean;
}

const REDACTED_PATHS = [
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
];

export function createLogger(level: string, opts: LoggerOptions = {}): Logger {
  const options: pino.LoggerOptions = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  if (opts.destination) return pino(options, opts.destination);
  const pretty = opts.format === 'pretty' || (opts.format !== 'json' && (opts.isTty ?? process.stdout.isTTY === true));
  return pretty ? pino(options, prettyStream()) : pino(options);
}

/** Loaded only for a terminal, so JSON-logging servers never pay for it. */
function prettyStream(): pino.DestinationStream {
  const require = createRequire(import.meta.url);
  const pinoPretty = require('pino-pretty') as (o: Record<string, unknown>) => pino.DestinationStream;
  // Synchronous, in this thread: a line is on screen before the banner that follows it.
  return pinoPretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}
