/**
 * Governance with the seller (README, Governance): before the first governed buy for
 * an account at a seller that declares `media_buy.governance_aware`, the governance
 * agent is registered there with `sync_governance`, once per seller and account, and
 * again when the governance agent (or its credentials) changes. A governance agent
 * without seller_credentials is never registered, and its JSON says so; one the
 * seller refuses to register ends the buy failed, nothing checked or sent.
 *
 * The registration's `url` must be https (every AdCP release): the sandbox governance
 * agent is reached through a loopback TLS front (test/helpers/tls-front.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGoverned, syncPlan, governedBuy, governedRequest, sellerReceived, waitForStep, type GovernedSetup } from '../helpers/governed.js';
import { startTlsFront, trustLoopbackCertificate, type TlsFront } from '../helpers/tls-front.js';
import { waitForStatus } from '../helpers/orchestrator.js';
import { caller, newKey } from '../helpers/governance.js';

const CREDENTIALS = 'gov-seller-credentials-0123456789abcdef-A';
const ROTATED = 'gov-seller-credentials-0123456789abcdef-B';

let g: GovernedSetup;
let fronts: TlsFront[] = [];
let untrust: () => void;

beforeAll(async () => {
  untrust = trustLoopbackCertificate();
  g = await startGoverned({
    seller: { governanceAware: true },
    governanceUrl: async (governance) => {
      const front = await startTlsFront(governance.origin);
      fronts.push(front);
      return `${front.origin}/mcp`;
    },
  });
  // Room for every buy of this file (4,000 each).
  const synced = await syncPlan(g, 'plan_sync', { budget: { total: 100_000, currency: 'USD', reallocation_threshold: 1_000 } });
  expect(synced.status).toBe('completed');
});

afterAll(async () => {
  await g?.close();
  for (const f of fronts) await f.close();
  untrust?.();
});

const seller = () => g.sellers[0]!;
const syncs = () => seller().governanceSyncs!.syncs();
const agentJson = async (id: string) => (await g.orch.api('GET', `/v1/agents/${id}`)).body;

async function buy(request = governedRequest(), governanceId = g.governanceId, planId = 'plan_sync') {
  const res = await g.orch.api('POST', '/v1/media-buys', { agent_id: g.sellerIds[0], request, governance: { agent_id: governanceId, plan_id: planId } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return waitForStatus(g.orch, res.body.id, ['completed', 'failed', 'rejected'], 30_000);
}

describe('sync_governance before governed buys at a governance-aware seller', () => {
  it('the seller declares itself governance-aware, and a governance agent without seller_credentials says it is not registered', async () => {
    const sellerAgent = await agentJson(g.sellerIds[0]!);
    expect(sellerAgent.capabilities.media_buy).toMatchObject({ governance_aware: true });
    const agent = await agentJson(g.governanceId);
    expect(agent.seller_credentials_set).toBe(false);
    expect(agent.seller_registration).toMatch(/no seller_credentials/);
  });

  it('without seller_credentials no sync_governance is sent: the buy goes on, the operation says why', async () => {
    const op = await buy();
    expect(op.status).toBe('completed');
    expect(op.governance.seller_sync).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/no seller_credentials/) });
    expect(op.events.some((e: any) => e.kind === 'governance_synced')).toBe(false);
    expect(syncs()).toEqual([]);
    expect(seller().stats().calls.some((c) => c.tool === 'sync_governance')).toBe(false);
  });

  it('with seller_credentials the first buy is preceded by sync_governance (https URL, Bearer credentials), a second one sends none', async () => {
    const patched = await g.orch.api('PATCH', `/v1/agents/${g.governanceId}`, { seller_credentials: CREDENTIALS });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ seller_credentials_set: true, seller_registration: expect.stringMatching(/^registered with each governance-aware seller/) });
    // Never shown, never stored in clear.
    expect(JSON.stringify(patched.body)).not.toContain(CREDENTIALS);
    expect(JSON.stringify(await agentJson(g.governanceId))).not.toContain(CREDENTIALS);
    const row = await g.orch.app.store.db.kysely.selectFrom('agents').selectAll().where('id', '=', g.governanceId).executeTakeFirstOrThrow();
    expect(row.seller_credentials_enc).toBeTruthy();
    expect(row.seller_credentials_enc).not.toContain(CREDENTIALS);

    const first = await waitForStep(g.orch, (await buy()).id, 'reported');
    expect(first.status).toBe('completed');
    expect(syncs()).toMatchObject([{ account: { account_id: 'gov_acme' }, url: `${fronts[0]!.origin}/mcp`, schemes: ['Bearer'], credentials: CREDENTIALS, status: 'synced' }]);
    expect(seller().governanceSyncs!.registered('gov_acme')).toBe(`${fronts[0]!.origin}/mcp`);
    // The registration came before the check and the buy, each once.
    const kinds = first.events.map((e: any) => e.kind);
    expect(kinds.indexOf('governance_synced')).toBeGreaterThanOrEqual(0);
    expect(kinds.indexOf('governance_synced')).toBeLessThan(kinds.indexOf('governance_decision'));
    expect(first.governance.seller_sync).toMatchObject({ status: 'synced', idempotency_key: syncs()[0]!.idempotency_key });
    const tools = seller().stats().calls.map((c) => c.tool);
    expect(tools.lastIndexOf('sync_governance')).toBeLessThan(tools.lastIndexOf('create_media_buy'));
    expect(sellerReceived(seller(), first.idempotency_key)).toHaveLength(1);
    // The credentials are sealed in no request the orchestrator keeps: nothing stores them but the agent row.
    expect(JSON.stringify(first)).not.toContain(CREDENTIALS);

    const second = await buy();
    expect(second.status).toBe('completed');
    expect(second.governance.seller_sync).toMatchObject({ status: 'current' });
    expect(second.events.some((e: any) => e.kind === 'governance_sync_current')).toBe(true);
    expect(syncs()).toHaveLength(1);
  });

  it('changing the governance agent registers the new one; rotated credentials are registered again', async () => {
    // A second governance agent (another https URL to the same sandbox agent), with its own plan.
    const front = await startTlsFront(g.governance.origin);
    fronts.push(front);
    const created = await g.orch.api('POST', '/v1/agents', { name: 'governance-2', role: 'governance', protocol: 'mcp', url: `${front.origin}/mcp`, seller_credentials: ROTATED });
    expect(created.status).toBe(201);
    expect(created.body.seller_credentials_set).toBe(true);
    const plan = await g.orch.api('POST', '/v1/plans', {
      agent_id: created.body.id,
      plans: [{ plan_id: 'plan_sync_2', brand: { domain: 'example-brand.com' }, objectives: 'second agent', budget: { total: 10_000, currency: 'USD', reallocation_threshold: 1_000 }, flight: { start: '2026-01-01T00:00:00Z', end: '2031-12-31T23:59:59Z' }, countries: ['US'], approved_sellers: [seller().url] }],
    });
    expect((await waitForStatus(g.orch, plan.body.id, ['completed', 'failed'])).status).toBe('completed');

    const other = await buy(governedRequest(), created.body.id, 'plan_sync_2');
    expect(other.status).toBe('completed');
    expect(other.governance.seller_sync).toMatchObject({ status: 'synced' });
    expect(syncs().at(-1)).toMatchObject({ url: `${front.origin}/mcp`, credentials: ROTATED });
    expect(syncs()).toHaveLength(2);

    // Back to the first agent: the seller names the second now, so it is registered again.
    const back = await buy();
    expect(back.governance.seller_sync).toMatchObject({ status: 'synced' });
    expect(syncs().at(-1)).toMatchObject({ url: `${fronts[0]!.origin}/mcp`, credentials: CREDENTIALS });

    // Its credentials rotated: registered again with the new ones, once.
    expect((await g.orch.api('PATCH', `/v1/agents/${g.governanceId}`, { seller_credentials: ROTATED })).status).toBe(200);
    expect((await buy()).governance.seller_sync).toMatchObject({ status: 'synced' });
    expect((await buy()).governance.seller_sync).toMatchObject({ status: 'current' });
    expect(syncs()).toHaveLength(4);
    expect(syncs().at(-1)).toMatchObject({ url: `${fronts[0]!.origin}/mcp`, credentials: ROTATED });
  });

  it('a registration the seller refuses ends the buy failed: no check, nothing sent', async () => {
    seller().governanceSyncs!.refuse('gov_refusing');
    const request = governedRequest('sandbox_instant', { account: { account_id: 'gov_refusing' } });
    const op = await buy(request);
    expect(op.status).toBe('failed');
    expect(op.error).toMatchObject({ code: 'GOVERNANCE_SYNC_REFUSED', details: { step: 'sync_governance', seller_error: { code: 'UNAUTHORIZED' } } });
    expect(op.error.message).toMatch(/refused to register the governance agent/);
    expect(op.governance).toMatchObject({ step: 'ended', checks: 0, seller_sync: { status: 'pending', last_error: { code: 'GOVERNANCE_SYNC_REFUSED' } } });
    expect(g.governance.stats().checks.filter((c) => c.payload.idempotency_key === op.idempotency_key)).toEqual([]);
    expect(sellerReceived(seller(), op.idempotency_key)).toEqual([]);
    expect(await g.orch.app.store.governanceSyncs.get(g.sellerIds[0]!, '{"account_id":"gov_refusing"}')).toBeUndefined();
  });

  it('a governance agent with seller_credentials at an http URL cannot be registered: its JSON says so, a governed buy is refused at once', async () => {
    const http = await g.orch.api('POST', '/v1/agents', { name: 'governance-http', role: 'governance', protocol: 'mcp', url: g.governance.url, seller_credentials: CREDENTIALS });
    expect(http.status).toBe(201);
    expect(http.body.seller_registration).toMatch(/cannot be registered with sellers: its URL http:\/\/127\.0\.0\.1:\d+\/mcp is not https/);
    const plan = await g.orch.api('POST', '/v1/plans', {
      agent_id: http.body.id,
      plans: [{ plan_id: 'plan_sync_http', brand: { domain: 'example-brand.com' }, objectives: 'http agent', budget: { total: 10_000, currency: 'USD', reallocation_threshold: 1_000 }, flight: { start: '2026-01-01T00:00:00Z', end: '2031-12-31T23:59:59Z' }, countries: ['US'], approved_sellers: [seller().url] }],
    });
    expect((await waitForStatus(g.orch, plan.body.id, ['completed', 'failed'])).status).toBe('completed');
    const before = syncs().length;
    const res = await governedBuy({ ...g, governanceId: http.body.id }, 'plan_sync_http', governedRequest());
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'governance_agent_not_registrable' });
    expect(res.body.error.message).toMatch(/requires an https URL/);
    expect(syncs()).toHaveLength(before);
  });

  it('the sandbox seller checks sync_governance as the schema says: an http URL is VALIDATION_ERROR, nothing registered', async () => {
    const raw = caller({ url: seller().url, protocol: 'mcp' });
    const before = syncs().length;
    const reply = await raw.call('sync_governance', {
      idempotency_key: newKey(),
      accounts: [{ account: { account_id: 'gov_raw' }, governance_agents: [{ url: 'http://127.0.0.1:1/mcp', authentication: { schemes: ['Bearer'], credentials: CREDENTIALS } }] }],
    });
    expect(reply.error).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(syncs()).toHaveLength(before);
    expect(seller().governanceSyncs!.registered('gov_raw')).toBeUndefined();
  });

  it('seller_credentials are for governance agents, and at least 32 characters', async () => {
    const seller = await g.orch.api('POST', '/v1/agents', { name: 'x', role: 'seller', protocol: 'mcp', url: 'https://seller.example/mcp', seller_credentials: CREDENTIALS });
    expect(seller.status).toBe(400);
    const short = await g.orch.api('PATCH', `/v1/agents/${g.governanceId}`, { seller_credentials: 'too-short' });
    expect(short.status).toBe(400);
    const onSeller = await g.orch.api('PATCH', `/v1/agents/${g.sellerIds[0]}`, { seller_credentials: CREDENTIALS });
    expect(onSeller.status).toBe(400);
  });
});
