/**
 * Nothing leaves us that the agent's schema refuses (src/adcp/request-schema.ts).
 * A request is checked twice, for two different people:
 *
 * - when it is asked for (`POST /v1/operations`, `/v1/media-buys`, a campaign's
 *   buy, a corrected request): a problem in what the caller wrote is the caller's
 *   to fix, answered 400 naming the pointer, and nothing is stored. A problem in
 *   what we add (our key, `context`, webhooks, `plan_id`) is ours: the operation
 *   is stored and its send fails it (below), so the bug is seen where it happened;
 * - just before it is sent (and before a governance agent is shown it): a request
 *   that fails here ends `failed` with `REQUEST_INVALID` and `details.side: "ours"`,
 *   with nothing sent and no retry.
 */
import { DEFAULT_ADCP_VERSION, describeIssues, requestIssues } from '../adcp/request-schema.js';
import { EngineError } from './errors.js';

/** The fields we add to a caller's request; issues under them are our bugs, not the caller's. */
export interface OurFields {
  /** The caller sent no idempotency_key: ours is derived or minted. */
  idempotencyKey: boolean;
  /** Our reporting webhook, not the caller's own. */
  reportingWebhook: boolean;
  /** Governed: `plan_id` is the governance's. */
  planId: boolean;
}

const ALWAYS_OURS = ['/push_notification_config', '/governance_context', '/context/orchestrator_operation_id', '/adcp_major_version', '/adcp_version'];

function isOurs(pointer: string, ours: OurFields): boolean {
  const under = (field: string) => pointer === field || pointer.startsWith(`${field}/`);
  if (ALWAYS_OURS.some(under)) return true;
  return (ours.idempotencyKey && under('/idempotency_key')) || (ours.reportingWebhook && under('/reporting_webhook')) || (ours.planId && under('/plan_id'));
}

/**
 * A new request, as it will be stored: 400 (`request_invalid`) when what the caller
 * wrote is not valid for the agent's AdCP version. `valid` is false when only what we
 * added is at fault: stored, it fails at its send.
 */
export function checkNewRequest(task: string, built: Record<string, unknown>, ours: OurFields, version: string = DEFAULT_ADCP_VERSION): { valid: boolean } {
  const issues = requestIssues(task, built, version) ?? [];
  const theirs = issues.filter((i) => !isOurs(i.pointer, ours));
  if (theirs.length === 0) return { valid: issues.length === 0 };
  throw new EngineError('request_invalid', `the ${task} request is not valid for AdCP ${version}: ${describeIssues(theirs)}`, 400, {
    issues: theirs.map(({ pointer, message }) => ({ pointer, message })),
    side: 'caller',
    adcp_version: version,
  });
}
