/**
 * Which AdCP version the sandbox seller speaks, and in which it serves each call.
 *
 * A 3.0 seller serves everything in 3.0, as it always has. A 3.1 seller declares
 * `supported_versions: ["3.0", "3.1"]` and serves each request in the release it
 * pins (`adcp_version`), downshifted to the highest release it speaks at or below
 * the pin (core/version-envelope.json): a `3.0` pin is served in 3.0 (its schemas,
 * its reply shapes), a `3.1` pin or any later 3.x in 3.1, and a request that pins
 * no release in the seller's highest, 3.1. A pin of another major (either field)
 * is refused with VERSION_UNSUPPORTED, as the spec says.
 */
import { errorResult, type ToolResult } from './wire.js';

export type SellerVersion = '3.0' | '3.1';

/** The releases a seller of `version` declares (`adcp.supported_versions`), oldest first. */
export function supportedVersions(version: SellerVersion): SellerVersion[] {
  return version === '3.1' ? ['3.0', '3.1'] : ['3.0'];
}

/** A release pin as the version envelope spells it: `3.1`, `3.1-beta.2`. */
const RELEASE = /^(\d+)\.(\d+)(?:-([A-Za-z0-9.-]+))?$/;

/** The version a call is served in, or the refusal of a pin the seller cannot serve. */
export function servedVersion(args: Record<string, unknown>, seller: SellerVersion): SellerVersion | { refusal: ToolResult } {
  if (seller === '3.0') return '3.0';
  const echo = args.context !== undefined ? { context: args.context } : {};
  const refuse = (what: string): { refusal: ToolResult } => ({
    refusal: errorResult('VERSION_UNSUPPORTED', `${what}; this seller speaks AdCP ${supportedVersions(seller).join(', ')}`, {
      recovery: 'correctable',
      details: { supported_versions: supportedVersions(seller) },
      extra: { status: 'failed', adcp_version: seller, ...echo },
    }),
  });
  const major = args.adcp_major_version;
  if (major !== undefined && major !== 3) return refuse(`adcp_major_version ${JSON.stringify(major)} is not 3`);
  const pin = args.adcp_version;
  if (pin === undefined) return seller;
  const m = typeof pin === 'string' ? RELEASE.exec(pin) : null;
  if (!m || m[1] !== '3') return refuse(`adcp_version ${JSON.stringify(pin)} is not a release of AdCP 3`);
  const minor = Number(m[2]);
  // A pre-release of a minor comes before it: 3.1-beta is served as 3.0.
  const below31 = minor === 0 || (minor === 1 && m[3] !== undefined);
  return below31 ? '3.0' : '3.1';
}

/**
 * The task tools a seller serves. 3.0 names polls and lists `tasks/get` and
 * `tasks/list` (the sandbox has always answered the 3.1 names and `tasks_get` too);
 * a 3.1 seller serves only `get_task_status` and `list_tasks` unless asked to keep
 * the old names, so a test can show a 3.1 buyer never calls them.
 */
export function taskToolNames(version: SellerVersion, legacyTaskTools: boolean): { poll: string[]; list: string[] } {
  if (version === '3.0' || legacyTaskTools) return { poll: ['tasks/get', 'tasks_get', 'get_task_status'], list: ['tasks/list', 'list_tasks'] };
  return { poll: ['get_task_status'], list: ['list_tasks'] };
}

/**
 * A 3.1 webhook payload must echo the buyer's `operation_id` (core/mcp-webhook-payload.json
 * requires it), so a 3.1 request that registers a webhook without one is refused, as the
 * spec lets a seller refuse it (push-notification-config.json), rather than left unable
 * to send its webhooks.
 */
export function operationIdRefusal(args: Record<string, unknown>): ToolResult | undefined {
  const push = args.push_notification_config;
  if (push === null || typeof push !== 'object' || Array.isArray(push) || 'operation_id' in push) return undefined;
  return errorResult('INVALID_REQUEST', 'push_notification_config.operation_id is required: every webhook payload echoes it', {
    recovery: 'correctable',
    field: 'push_notification_config.operation_id',
    ...(args.context !== undefined && { extra: { context: args.context } }),
  });
}
