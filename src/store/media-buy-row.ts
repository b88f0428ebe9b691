/**
 * A whole `media_buys` row spelled out once, as src/store/operation-row.ts does for
 * operations: the engine (a buy made by a completed create), the tests and the
 * benchmarks build buy rows, and building them here means a column added later is given its default once, not in every
 * caller, and each caller states only what differs.
 */
import type { MediaBuyRow } from './media-buys-repo.js';

/** What has no sensible default: which buy this is, for whom, made by which operation, and when. */
export type MediaBuyIdentity = Pick<MediaBuyRow, 'id' | 'tenant_id' | 'agent_id' | 'operation_id' | 'media_buy_id' | 'created_at'>;

/**
 * A row as a buy nothing has happened to yet: `pending_start`, no flight or budget,
 * nothing delivered or reported, not governed, in no campaign, no reporting webhook of
 * ours, no timer, no lease, read by its seller, `updated_at` equal to `created_at`. `overrides` wins over
 * every default (and over `identity`).
 */
export function newMediaBuyRow(identity: MediaBuyIdentity, overrides: Partial<MediaBuyRow> = {}): MediaBuyRow {
  return {
    id: identity.id,
    tenant_id: identity.tenant_id,
    agent_id: identity.agent_id,
    operation_id: identity.operation_id,
    media_buy_id: identity.media_buy_id,
    campaign_id: null,
    account: null,
    governance: null,
    governance_context_enc: null,
    status: 'pending_start',
    revision: null,
    valid_actions: null,
    flight_start: null,
    flight_end: null,
    budget_amount: null,
    currency: null,
    packages: '[]',
    impressions: 0,
    spend: 0,
    clicks: null,
    delivered_through: null,
    delivery_source: null,
    delivery_updated_at: null,
    pacing_state: 'not_started',
    pacing_ratio: null,
    pacing_expected: null,
    report_frequency: null,
    reports_received: 0,
    last_sequence: null,
    next_expected_at: null,
    reports_missing: 0,
    gap_open: 0,
    final_received: 0,
    reporting_token: null,
    reporting_secret_enc: null,
    reporting_auth: 'none',
    next_check_at: null,
    status_check_at: null,
    report_due_at: null,
    delivery_poll_at: null,
    creative_check_at: null,
    unreadable_since: null,
    unreadable_reason: null,
    lease_owner: null,
    lease_until: null,
    lease_epoch: 0,
    attempt: 0,
    created_at: identity.created_at,
    updated_at: identity.created_at,
    ended_at: null,
    ...overrides,
  };
}
