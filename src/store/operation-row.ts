/**
 * The one place a whole `operations` row is spelled out. The engine (a new
 * operation, an adopted one), the tests and the benchmarks all insert rows;
 * building them here means a column added later is given its default once,
 * not in every caller, and each caller states only what differs.
 */
import type { OperationRow } from './operations-repo.js';

/** What has no sensible default: which operation this is, for whom, and when it began. */
export type OperationIdentity = Pick<
  OperationRow,
  'id' | 'tenant_id' | 'agent_id' | 'type' | 'idempotency_key' | 'request_body' | 'created_at'
>;

/**
 * A row as a fresh, unclaimed, unsent operation: `requested`, no timer, no
 * lease, no webhook, `updated_at` equal to `created_at`. `overrides` wins over
 * every default (and over `identity`).
 *
 * `status_since` and `reminded_at` are left out unless given: they are later,
 * optional columns (NULL when not inserted), and the rows built before this
 * helper existed set `status_since` only where the engine creates an operation.
 */
export function newOperationRow(identity: OperationIdentity, overrides: Partial<OperationRow> = {}): OperationRow {
  return {
    id: identity.id,
    tenant_id: identity.tenant_id,
    agent_id: identity.agent_id,
    type: identity.type,
    status: 'requested',
    task_id: null,
    context_id: null,
    idempotency_key: identity.idempotency_key,
    request_body: identity.request_body,
    result: null,
    error: null,
    needs_input: 0,
    input_message: null,
    stalled: 0,
    stalled_reason: null,
    deadline_at: null,
    next_check_at: null,
    check_kind: null,
    poll_count: 0,
    attempt: 0,
    lease_owner: null,
    lease_until: null,
    lease_epoch: 0,
    webhook_mode: 'none',
    webhook_token: null,
    webhook_secret_enc: null,
    last_observed_at: null,
    created_at: identity.created_at,
    updated_at: identity.created_at,
    completed_at: null,
    parent_id: null,
    ...overrides,
  };
}
