/**
 * Structured logs (pino). No code logs a secret on purpose: request bodies,
 * tokens and keys are never passed to the logger, and what agents answer is
 * scrubbed of the secrets we sent them (adcp/scrub-secrets.ts). The redaction
 * below is the net under that, for the shapes a secret could take if an object
 * carrying one were ever logged whole: headers, agent and operation rows (and
 * their sealed columns), AdCP credential fields, configuration.
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

/** Each name at the top level and one level down (`{agent: {...}}`). */
const atTopAndNested = (names: string[]) => names.flatMap((n) => [n, `*.${n}`]);

export const REDACTED_LOG_PATHS = [
  ...['req.headers', 'headers', '*.headers'].flatMap((h) => [`${h}.authorization`, `${h}["x-adcp-auth"]`, `${h}.cookie`]),
  ...atTopAndNested([
    'authToken',
    'auth_token_enc',
    'webhook_secret_enc',
    'webhook_token',
    'request_body',
    'token',
    'apiKey',
    'api_key',
    'secret',
    'secretKey',
    'ADCP_ORCH_SECRET_KEY',
    'ADCP_ORCH_API_KEY',
  ]),
  // AdCP credential fields (domain/credential-fields.ts) up to a request nested in a log object.
  'credentials',
  '*.credentials',
  '*.*.credentials',
  '*.*.*.credentials',
];

/** A request as logged: never its headers, and a webhook URL without its token (only the seller may know it). */
function requestForLog(req: { method?: string; url?: string; id?: unknown }) {
  return { method: req.method, url: req.url?.replace(/(\/webhooks\/adcp\/)[^/?#]+/, '$1[redacted]'), id: req.id };
}

export function createLogger(level: string, opts: LoggerOptions = {}): Logger {
  const options: pino.LoggerOptions = { level, redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' }, serializers: { req: requestForLog } };
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
