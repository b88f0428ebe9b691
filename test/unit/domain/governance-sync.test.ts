/**
 * Governance with the seller, the pure parts: when a sync_governance is owed, the
 * request (valid for 3.0, 3.1 and 3.2, and refused by each for an http URL or short
 * credentials), reading the seller's answer; and the spend-commit tasks other than
 * media buys: their purchase_type on a check and a report that are still valid, and
 * what each reports as committed.
 */
import { describe, expect, it } from 'vitest';
import { requestIssues } from '../../../src/adcp/request-schema.js';
import { accountKey, isGovernanceAware, readSyncReply, sellerRegistration, sellerSyncNeed, syncGovernanceRequest, syncIdempotencyKey } from '../../../src/domain/governance-sync.js';
import { checkArguments, initialState, outcomeRequest, presentGovernance, type GovernedState } from '../../../src/domain/governed-flow.js';
import { GOVERNED_TASKS, purchaseTypeOf, sellerResponseOf } from '../../../src/domain/governed-tasks.js';

const CREDENTIALS = 'issued-by-governance-for-sellers-0123456789';
const aware = JSON.stringify({ media_buy: { governance_aware: true } });
const seller = { name: 'seller', capabilities: aware };
const governance = { name: 'gov', url: 'https://gov.example/mcp', seller_credentials_enc: 'v1.sealed' };
const account = { account_id: 'acc_1' };
const KEY = syncIdempotencyKey('0190f1e2-0000-7000-8000-000000000001', 'ab'.repeat(32));

describe('when a sync_governance is owed', () => {
  it('at a governance-aware seller, for a request naming an account, with seller_credentials and an https URL', () => {
    expect(sellerSyncNeed(seller, governance, { account })).toEqual({ kind: 'sync' });
  });

  it('not at a seller that does not declare governance_aware (or declares false), nor without an account', () => {
    expect(sellerSyncNeed({ name: 's', capabilities: null }, governance, { account })).toEqual({ kind: 'none' });
    expect(sellerSyncNeed({ name: 's', capabilities: JSON.stringify({ media_buy: { governance_aware: false } }) }, governance, { account })).toEqual({ kind: 'none' });
    expect(sellerSyncNeed(seller, governance, {})).toEqual({ kind: 'none' });
    expect(isGovernanceAware('not json')).toBe(false);
  });

  it('skipped, saying why, without seller_credentials; refused for an http URL', () => {
    expect(sellerSyncNeed(seller, { ...governance, seller_credentials_enc: null }, { account })).toMatchObject({ kind: 'skip', reason: expect.stringMatching(/no seller_credentials/) });
    expect(sellerSyncNeed(seller, { ...governance, url: 'http://127.0.0.1:9/mcp' }, { account })).toMatchObject({ kind: 'refuse', reason: expect.stringMatching(/not https/) });
    expect(sellerRegistration({ url: 'http://127.0.0.1:9/mcp', seller_credentials_enc: 'v1.x' })).toMatch(/^cannot be registered/);
    expect(sellerRegistration({ url: 'https://gov.example', seller_credentials_enc: null })).toMatch(/^not registered/);
  });

  it('keys a registration by the account as canonical JSON', () => {
    expect(accountKey({ operator: 'op.example', brand: { domain: 'b.example', brand_id: 'x' } })).toBe('{"brand":{"brand_id":"x","domain":"b.example"},"operator":"op.example"}');
    expect(accountKey(undefined)).toBeUndefined();
    expect(accountKey(['a'])).toBeUndefined();
  });
});

describe('the sync_governance request', () => {
  const request = syncGovernanceRequest({ idempotencyKey: KEY, account, url: 'https://gov.example/mcp', credentials: CREDENTIALS });

  it('is one account, one agent, Bearer: valid in 3.0, 3.1 and 3.2', () => {
    expect(request).toEqual({
      idempotency_key: KEY,
      accounts: [{ account, governance_agents: [{ url: 'https://gov.example/mcp', authentication: { schemes: ['Bearer'], credentials: CREDENTIALS } }] }],
    });
    for (const version of ['3.0', '3.1', '3.2']) expect(requestIssues('sync_governance', request, version)).toEqual([]);
  });

  it('is refused by every version for an http URL or credentials under 32 characters', () => {
    const http = syncGovernanceRequest({ idempotencyKey: KEY, account, url: 'http://127.0.0.1:4000/mcp', credentials: CREDENTIALS });
    const short = syncGovernanceRequest({ idempotencyKey: KEY, account, url: 'https://gov.example/mcp', credentials: 'x'.repeat(31) });
    for (const version of ['3.0', '3.1', '3.2']) {
      expect(requestIssues('sync_governance', http, version)?.map((i) => i.pointer)).toContain('/accounts/0/governance_agents/0/url');
      expect(requestIssues('sync_governance', short, version)?.map((i) => i.pointer)).toContain('/accounts/0/governance_agents/0/authentication/credentials');
    }
  });

  it('keeps its key across retries of the same registration, and changes it with what is registered', () => {
    expect(KEY).toMatch(/^[A-Za-z0-9_.:-]{16,255}$/);
    expect(syncIdempotencyKey('op', 'ab'.repeat(32))).not.toBe(syncIdempotencyKey('op', 'cd'.repeat(32)));
  });
});

describe("the seller's answer", () => {
  it('synced; the account failed or the whole sync refused; or nothing to go on', () => {
    expect(readSyncReply({ accounts: [{ account, status: 'synced', governance_agents: [{ url: 'https://gov.example/mcp' }] }] })).toEqual({ kind: 'synced' });
    expect(readSyncReply({ accounts: [{ account, status: 'failed', errors: [{ code: 'ACCOUNT_NOT_FOUND', message: 'no such account' }] }] })).toEqual({
      kind: 'refused',
      error: { code: 'ACCOUNT_NOT_FOUND', message: 'no such account' },
    });
    expect(readSyncReply({ errors: [{ code: 'UNAUTHORIZED' }] })).toEqual({ kind: 'refused', error: { code: 'UNAUTHORIZED' } });
    expect(readSyncReply({ accounts: [] }).kind).toBe('no_answer');
    expect(readSyncReply({ accounts: [{ account, status: 'pending' }] }).kind).toBe('no_answer');
  });
});

const NOW = Date.parse('2026-06-01T12:00:00Z');
const TOKEN = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJwbGFuXzEifQ.c2ln';

function approved(tool: string): GovernedState {
  const state = initialState({ agent_id: 'agt_gov', plan_id: 'plan_1', target_agent: 'https://signals.example/mcp', caller: 'https://orch.example', tool, apply_conditions: false }, NOW);
  return { ...state, step: 'approved', approval: { check_id: 'chk_1', token: TOKEN, expires_at: NOW + 900_000, received_at: NOW } };
}

describe('activate_signal and acquire_rights, governed', () => {
  const activation = { idempotency_key: '3f1d2c4b-5a6e-4f70-8a91-b2c3d4e5f607', signal_agent_segment_id: 'seg_1', destinations: [{ type: 'platform', platform: 'ttd' }], pricing_option_id: 'po_1' };

  it('are governed tasks, checked with their purchase_type (still a valid check in 3.0 and 3.1)', () => {
    expect(GOVERNED_TASKS.has('activate_signal') && GOVERNED_TASKS.has('acquire_rights')).toBe(true);
    expect(GOVERNED_TASKS.has('build_creative')).toBe(false);
    expect([purchaseTypeOf('activate_signal'), purchaseTypeOf('acquire_rights'), purchaseTypeOf('create_media_buy')]).toEqual(['signal_activation', 'rights_license', undefined]);
    const check = checkArguments(approved('activate_signal'), activation, 'op_1');
    expect(check).toMatchObject({ tool: 'activate_signal', purchase_type: 'signal_activation', payload: activation });
    expect(requestIssues('check_governance', check, '3.0')).toEqual([]);
    expect(requestIssues('check_governance', checkArguments(approved('activate_signal'), activation, 'op_1', '3.1'), '3.1')).toEqual([]);
    expect(checkArguments(approved('create_media_buy'), {}, 'op_1')).not.toHaveProperty('purchase_type');
  });

  it('an activation reports its segment and no amount it cannot know; the report is valid', () => {
    const { outcome, request } = outcomeRequest(approved('activate_signal'), '9b2f0c1d-1111-4222-8333-944455556666', { status: 'completed', request: activation, result: { deployments: [{ type: 'platform', platform: 'ttd', is_live: true }] } });
    expect(outcome).toBe('completed');
    expect(request).toMatchObject({ purchase_type: 'signal_activation', check_id: 'chk_1', seller_response: { seller_reference: 'seg_1' } });
    expect(request.seller_response).not.toHaveProperty('committed_budget');
    expect(requestIssues('report_plan_outcome', request, '3.0')).toEqual([]);
  });

  it('an acquisition commits its agreed terms; a rejected one is reported failed with its reason', () => {
    const rights = { rights_id: 'r_1', pricing_option_id: 'po_flat' };
    expect(sellerResponseOf('acquire_rights', rights, { rights_id: 'grant_9', status: 'acquired', terms: { pricing_option_id: 'po_flat', amount: 2500, currency: 'USD', uses: ['likeness'] } })).toEqual({
      seller_reference: 'grant_9',
      committed_budget: 2500,
    });
    const rejected = outcomeRequest(approved('acquire_rights'), '9b2f0c1d-1111-4222-8333-944455556667', { status: 'completed', request: rights, result: { rights_id: 'r_1', status: 'rejected', brand_id: 'b', reason: 'talent unavailable' } });
    expect(rejected.outcome).toBe('failed');
    expect(rejected.request).toMatchObject({ purchase_type: 'rights_license', outcome: 'failed', error: { code: 'RIGHTS_REJECTED', message: 'talent unavailable' } });
    expect(requestIssues('report_plan_outcome', rejected.request, '3.0')).toEqual([]);
  });

  it('a media buy reports as before: its budget committed, no purchase_type', () => {
    const request = { packages: [{ budget: 100 }, { budget: 50 }] };
    const { request: report } = outcomeRequest(approved('create_media_buy'), '9b2f0c1d-1111-4222-8333-944455556668', { status: 'completed', request, result: { media_buy_id: 'mb_1' } });
    expect(report).not.toHaveProperty('purchase_type');
    expect(report.seller_response).toEqual({ seller_reference: 'mb_1', committed_budget: 150 });
  });

  it('the operation shows the seller registration only when there is one', () => {
    expect(presentGovernance(approved('create_media_buy'))).not.toHaveProperty('seller_sync');
    expect(presentGovernance({ ...approved('create_media_buy'), seller_sync: { status: 'synced', idempotency_key: KEY } }).seller_sync).toEqual({ status: 'synced', idempotency_key: KEY });
  });
});
