/**
 * Pure decisions for create_media_buy: is the request acceptable, which
 * scripted behaviour does it select, and what does the resulting media buy
 * look like. No I/O and no state, so each rule can be read on its own.
 */
import { randomUUID } from 'node:crypto';
import { validActionsForStatus } from '@adcp/sdk/server';
import { findSandboxProduct, type SandboxProduct } from './products.js';
import { checkReportingWebhook } from './reporting-webhook.js';
import type { PushNotificationConfig } from './tasks.js';
import { isPlainObject } from './wire.js';

export interface RequestProblem {
  code: 'INVALID_REQUEST' | 'PRODUCT_NOT_FOUND';
  message: string;
  field?: string;
}

export interface AcceptedRequest {
  product: SandboxProduct;
  push?: PushNotificationConfig;
}

/**
 * Checks a real seller would make before doing anything. Being strict here is
 * deliberate: the orchestrator under test should send spec-valid requests.
 */
export function checkCreateRequest(args: Record<string, unknown>): RequestProblem | AcceptedRequest {
  const missing = ['account', 'brand', 'start_time', 'end_time'].filter((f) => args[f] === undefined);
  if (missing.length > 0) {
    return { code: 'INVALID_REQUEST', message: `missing required field(s): ${missing.join(', ')}`, field: missing[0] };
  }
  const packages = args.packages;
  if (!Array.isArray(packages) || packages.length === 0) {
    return {
      code: 'INVALID_REQUEST',
      message: 'packages[] is required (the sandbox does not support proposal_id); see get_products',
      field: 'packages',
    };
  }
  for (const [i, p] of packages.entries()) {
    if (!isPlainObject(p) || typeof p.product_id !== 'string') {
      return { code: 'INVALID_REQUEST', message: `packages[${i}].product_id is required`, field: `packages[${i}].product_id` };
    }
  }
  const first = packages[0] as { product_id: string };
  const product = findSandboxProduct(first.product_id);
  if (!product) {
    return {
      code: 'PRODUCT_NOT_FOUND',
      message: `unknown product_id "${first.product_id}"; call get_products for the sandbox catalogue`,
      field: 'packages[0].product_id',
    };
  }
  const push = checkPushConfig(args.push_notification_config);
  if (push && 'code' in push) return push;
  const reporting = checkReportingWebhook(args.reporting_webhook);
  if (reporting && 'code' in reporting) return reporting;
  return { product, ...(push && { push }) };
}

/**
 * A seller must refuse a webhook channel it cannot honour rather than drop it
 * silently, so anything unusable here is INVALID_REQUEST.
 */
export function checkPushConfig(raw: unknown): PushNotificationConfig | RequestProblem | undefined {
  if (raw === undefined) return undefined;
  const bad = (message: string, field = 'push_notification_config'): RequestProblem => ({
    code: 'INVALID_REQUEST',
    message,
    field,
  });
  if (!isPlainObject(raw)) return bad('push_notification_config must be an object');
  let url: URL;
  try {
    url = new URL(String(raw.url));
  } catch {
    return bad('push_notification_config.url must be an absolute URL', 'push_notification_config.url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return bad('push_notification_config.url must be http(s)', 'push_notification_config.url');
  }
  const config: PushNotificationConfig = { url: url.toString() };
  if (raw.operation_id !== undefined) {
    if (typeof raw.operation_id !== 'string') return bad('operation_id must be a string', 'push_notification_config.operation_id');
    config.operation_id = raw.operation_id;
  }
  if (raw.token !== undefined) {
    if (typeof raw.token !== 'string' || raw.token.length < 16) {
      return bad('token must be a string of at least 16 characters', 'push_notification_config.token');
    }
    config.token = raw.token;
  }
  if (raw.authentication !== undefined) {
    const a = raw.authentication;
    const field = 'push_notification_config.authentication';
    if (!isPlainObject(a) || !Array.isArray(a.schemes) || a.schemes.length !== 1) {
      return bad('authentication.schemes must list exactly one scheme', field);
    }
    const scheme = a.schemes[0];
    if (scheme !== 'HMAC-SHA256' && scheme !== 'Bearer') {
      return bad(`unsupported webhook authentication scheme ${JSON.stringify(scheme)}`, field);
    }
    if (typeof a.credentials !== 'string' || a.credentials.length < 32) {
      return bad('authentication.credentials must be at least 32 characters', field);
    }
    config.authentication = { schemes: [scheme], credentials: a.credentials };
  }
  // Keep the URL exactly as sent: the buyer may route on its bytes.
  config.url = String(raw.url);
  return config;
}

/** The 3.0 CreateMediaBuySuccess body for an accepted request. */
export function buildMediaBuy(args: Record<string, unknown>): Record<string, unknown> {
  const packages = (Array.isArray(args.packages) ? args.packages : []).map((p, i) => {
    const pkg = isPlainObject(p) ? p : {};
    return {
      package_id: `pkg_${i + 1}_${randomUUID().slice(0, 8)}`,
      ...(pkg.buyer_ref !== undefined && { buyer_ref: pkg.buyer_ref }),
      product_id: pkg.product_id,
      ...(pkg.budget !== undefined && { budget: pkg.budget }),
      ...(pkg.pricing_option_id !== undefined && { pricing_option_id: pkg.pricing_option_id }),
    };
  });
  // In 3.0 the success body's root `status` is the MediaBuyStatus, which
  // collides with task status on purpose-built buyers: we send it as real
  // 3.0 sellers do, so the orchestrator's classifier is exercised.
  const status = 'pending_creatives';
  return {
    media_buy_id: `mb_${randomUUID()}`,
    status,
    confirmed_at: new Date().toISOString(),
    revision: 1,
    valid_actions: validActionsForStatus(status),
    packages,
    sandbox: true,
  };
}

export const INPUT_REQUIRED_MESSAGE =
  'Sandbox seller needs the insertion order approved. Over A2A, answer on this task (a message on its ' +
  'taskId and contextId with the full create_media_buy input); out of band (the only way over MCP), ' +
  'with the custom tool sandbox_respond {task_id, approve: true|false, message?}.';

export const AUTH_REQUIRED_MESSAGE =
  'Sandbox seller needs fresh credentials for this buy. Answer with the custom tool ' +
  'sandbox_respond {task_id, approve: true|false} to simulate supplying (or refusing) them.';
