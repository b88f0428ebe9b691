/**
 * The buyer's `reporting_webhook` (on `create_media_buy`, replaceable by
 * `update_media_buy`): where, how often and how authenticated the sandbox
 * sends delivery reports. A seller must refuse a channel it cannot honour
 * rather than drop it, so anything unusable is INVALID_REQUEST.
 *
 * `authentication` is required in AdCP 3.x but 3.0 buyers omit it; without
 * it the reports are signed with RFC 9421, as operation webhooks are.
 */
import { REPORTING_FREQUENCIES, type ReportingFrequency } from './flight.js';
import type { WebhookAuth } from './webhook-sender.js';
import { isPlainObject } from './wire.js';

export interface ReportingWebhook {
  url: string;
  reporting_frequency: ReportingFrequency;
  authentication?: { schemes: ['HMAC-SHA256' | 'Bearer']; credentials: string };
  requested_metrics?: string[];
  token?: string;
}

export interface ReportingWebhookProblem {
  code: 'INVALID_REQUEST';
  message: string;
  field: string;
}

export function checkReportingWebhook(raw: unknown): ReportingWebhook | ReportingWebhookProblem | undefined {
  if (raw === undefined) return undefined;
  const bad = (message: string, field = 'reporting_webhook'): ReportingWebhookProblem => ({ code: 'INVALID_REQUEST', message, field });
  if (!isPlainObject(raw)) return bad('reporting_webhook must be an object');
  let url: URL;
  try {
    url = new URL(String(raw.url));
  } catch {
    return bad('reporting_webhook.url must be an absolute URL', 'reporting_webhook.url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return bad('reporting_webhook.url must be http(s)', 'reporting_webhook.url');
  const frequency = raw.reporting_frequency;
  if (typeof frequency !== 'string' || !(REPORTING_FREQUENCIES as readonly string[]).includes(frequency)) {
    return bad(`reporting_webhook.reporting_frequency must be one of ${REPORTING_FREQUENCIES.join(', ')}`, 'reporting_webhook.reporting_frequency');
  }
  // Keep the URL exactly as sent: the buyer routes on its bytes.
  const config: ReportingWebhook = { url: String(raw.url), reporting_frequency: frequency as ReportingFrequency };
  if (raw.token !== undefined) {
    if (typeof raw.token !== 'string' || raw.token.length < 16) return bad('token must be a string of at least 16 characters', 'reporting_webhook.token');
    config.token = raw.token;
  }
  if (raw.requested_metrics !== undefined) {
    if (!Array.isArray(raw.requested_metrics) || !raw.requested_metrics.every((m) => typeof m === 'string')) {
      return bad('requested_metrics must be an array of metric names', 'reporting_webhook.requested_metrics');
    }
    config.requested_metrics = [...raw.requested_metrics] as string[];
  }
  if (raw.authentication !== undefined) {
    const a = raw.authentication;
    const field = 'reporting_webhook.authentication';
    if (!isPlainObject(a) || !Array.isArray(a.schemes) || a.schemes.length !== 1) return bad('authentication.schemes must list exactly one scheme', field);
    const scheme = a.schemes[0];
    if (scheme !== 'HMAC-SHA256' && scheme !== 'Bearer') return bad(`unsupported webhook authentication scheme ${JSON.stringify(scheme)}`, field);
    if (typeof a.credentials !== 'string' || a.credentials.length < 32) return bad('authentication.credentials must be at least 32 characters', field);
    config.authentication = { schemes: [scheme], credentials: a.credentials };
  }
  return config;
}

/** The sender's mode for a reporting webhook: legacy HMAC, Bearer, or RFC 9421 (null). */
export function reportingAuth(webhook: ReportingWebhook): WebhookAuth {
  const a = webhook.authentication;
  if (!a) return null;
  return a.schemes[0] === 'HMAC-SHA256' ? { type: 'hmac_sha256', secret: a.credentials } : { type: 'bearer', token: a.credentials };
}

/** How a fire was authenticated, as stats name it. */
export function authName(auth: WebhookAuth): 'hmac' | 'bearer' | 'rfc9421' {
  return auth === null ? 'rfc9421' : auth.type === 'hmac_sha256' ? 'hmac' : 'bearer';
}
