/**
 * Our signed requests end to end (README, Signed requests) against the sandbox seller
 * requiring them (`requireSignedRequests`: create_media_buy and update_media_buy in
 * required_for, verified against our published JWKS over HTTP):
 * - a create and an update (pause) are signed and accepted, with our current key, over
 *   MCP and over A2A; reads the seller does not list go unsigned;
 * - a request sent unsigned (the signer turned off by its test hook) is refused
 *   request_signature_required: the operation ends failed with that code and a message
 *   saying what to check, and is never sent again;
 * - a resend after a cut connection carries a new nonce and the same idempotency key;
 * - after `rotate`, new requests verify with the new key, and the seller, with the old
 *   JWKS still cached, verifies a request signed just before the rotation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/adcp/request-signing.js';
import { eventually, waitForStatus } from '../helpers/orchestrator.js';
import { buyLive, buyWhen, liveBuyRequest, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';
import type { SandboxSellerOptions } from '../../src/sandbox/seller.js';

let stack: LiveBuyStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** A stack whose seller requires signed creates and updates, verified against the orchestrator's JWKS. */
async function signingStack(seller: SandboxSellerOptions = {}): Promise<LiveBuyStack> {
  let jwksUrl = '';
  const s = await startLiveBuyStack({ seller: { requireSignedRequests: { jwksUrl: () => jwksUrl }, ...seller } });
  jwksUrl = `${s.orch.url}/.well-known/jwks.json`;
  return s;
}

const records = (s: LiveBuyStack, operation?: string) => s.seller.requestSignatures!.records().filter((r) => !operation || r.operation === operation);

describe('signed requests to a seller that requires them', () => {
  it('signs a create and an update with our published key; the seller verifies and takes both', async () => {
    stack = await signingStack();
    const { orch, agentId } = stack;
    const agent = (await orch.api('GET', `/v1/agents/${agentId}`)).body;
    expect(agent.capabilities.request_signing).toMatchObject({ supported: true, required_for: ['create_media_buy', 'update_media_buy'], covers_content_digest: 'required' });
    const jwks = (await orch.api('GET', '/.well-known/jwks.json')).body;
    expect(jwks.keys).toHaveLength(1);
    const kid = jwks.keys[0].kid;

    const buy = await buyLive(orch, agentId);
    await stack.seller.reporting.fireNow(buy.media_buy_id); // moves it active, so it can be paused
    await buyWhen(orch, buy.id, (b) => b.status === 'active');
    const paused = await orch.api('POST', `/v1/media-buys/${buy.id}/pause`);
    expect(paused.status).toBe(202);
    await waitForStatus(orch, paused.body.id, ['completed']);
    await buyWhen(orch, buy.id, (b) => b.status === 'paused');

    const creates = records(stack, 'create_media_buy');
    const updates = records(stack, 'update_media_buy');
    expect(creates).toEqual([expect.objectContaining({ outcome: 'verified', keyid: kid })]);
    expect(updates).toEqual([expect.objectContaining({ outcome: 'verified', keyid: kid })]);
    expect(new Set([...creates, ...updates].map((r) => r.nonce)).size).toBe(2);
    // What the seller does not list is not signed (a read), and nothing was refused.
    expect(records(stack, 'get_adcp_capabilities').every((r) => r.outcome === 'unsigned')).toBe(true);
    expect(records(stack).filter((r) => r.outcome === 'refused')).toEqual([]);
    expect(stack.seller.mediaBuys().map((b) => b.status)).toEqual(['paused']);
  });

  it('signs over A2A as over MCP: the create reaches the seller signed and is taken', async () => {
    stack = await signingStack();
    const { orch, seller } = stack;
    const a2aAgent = await orch.registerAgent({ name: 'seller-a2a', url: seller.a2aUrl!, protocol: 'a2a' });
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: a2aAgent, request: liveBuyRequest(['sandbox_instant']), webhook: 'none' });
    expect(created.status).toBe(202);
    await waitForStatus(orch, created.body.id, ['completed']);
    const kid = (await orch.app.signingKeys.signingKey())!.kid;
    expect(records(stack, 'create_media_buy')).toEqual([expect.objectContaining({ outcome: 'verified', keyid: kid })]);
  });

  it('signs the polls of a seller that lists its poll tool (the lean poll path steps aside)', async () => {
    stack = await signingStack({ submittedDelayMs: 600, requireSignedRequests: { jwksUrl: () => `${stack!.orch.url}/.well-known/jwks.json`, requiredFor: ['create_media_buy', 'tasks/get'] } });
    const { orch, agentId } = stack;
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: liveBuyRequest(['sandbox_submitted']), webhook: 'none' });
    expect(created.status).toBe(202);
    await waitForStatus(orch, created.body.id, ['completed']);
    const polls = records(stack, 'tasks/get');
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((r) => r.outcome === 'verified')).toBe(true);
  });

  it('a request sent unsigned is refused request_signature_required: the operation fails with that code, what to check, and is not sent again', async () => {
    stack = await signingStack();
    const { orch, agentId } = stack;
    orch.app.signingKeys.enabled = false; // the test hook: every request goes unsigned
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: liveBuyRequest(['sandbox_instant']), webhook: 'none' });
    expect(created.status).toBe(202);
    const op = await waitForStatus(orch, created.body.id, ['failed']);
    expect(op.error).toMatchObject({ code: 'request_signature_required', recovery: 'terminal' });
    expect(op.error.message).toMatch(/refused our request signature \(request_signature_required\).*Check .*JWKS/s);
    const refused = records(stack, 'create_media_buy');
    expect(refused).toEqual([expect.objectContaining({ outcome: 'refused', code: 'request_signature_required' })]);
    expect(stack.seller.mediaBuys()).toEqual([]);
    // Never sent again: give the scheduler room to (wrongly) retry, then look.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(records(stack, 'create_media_buy')).toHaveLength(1);
    expect((await orch.api('GET', `/v1/operations/${created.body.id}`)).body.status).toBe('failed');
  });

  it('a resend after a cut connection is signed afresh: a new nonce, the same idempotency key', async () => {
    let cut = 0;
    stack = await signingStack({
      onMcpRequest: (raw) => {
        const msg = JSON.parse(raw);
        if (msg.method === 'tools/call' && msg.params?.name === 'create_media_buy' && cut++ === 0) return 'drop';
      },
    });
    const { orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    expect(buy.status).toBeDefined();
    const sends = records(stack, 'create_media_buy');
    expect(sends).toHaveLength(2);
    expect(sends.map((r) => r.outcome)).toEqual(['verified', 'verified']);
    expect(sends[0]!.idempotency_key).toBeDefined();
    expect(sends[1]!.idempotency_key).toBe(sends[0]!.idempotency_key);
    expect(sends[1]!.nonce).not.toBe(sends[0]!.nonce);
    expect(stack.seller.mediaBuys()).toHaveLength(1);
  });

  it('after rotate, new requests verify with the new key; a seller with the old JWKS cached verifies one signed just before', async () => {
    stack = await signingStack();
    const { orch, agentId, seller } = stack;
    await buyLive(orch, agentId); // the seller fetches and caches our JWKS
    const oldKid = (await orch.app.signingKeys.signingKey())!.kid;
    expect(records(stack, 'create_media_buy').at(-1)).toMatchObject({ outcome: 'verified', keyid: oldKid });
    const fetchedBefore = seller.requestSignatures!.jwksFetches();

    // Signed now, with the key in use, as our signer signs; sent after the rotation.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_products', arguments: { brief: 'signed before the rotation' } } });
    const key = (await orch.app.signingKeys.signingKey())!;
    const signed = signRequest({ method: 'POST', url: seller.url, contentType: 'application/json', body }, key, { profile: 'legacy', coverContentDigest: true, now: Math.floor(Date.now() / 1000) });

    const rotated = await orch.app.signingKeys.rotate(0);
    expect(rotated.key.kid).not.toBe(oldKid);
    expect(rotated.replaced.map((k) => k.kid)).toEqual([oldKid]);
    const published = (await orch.api('GET', '/.well-known/jwks.json')).body.keys.map((k: any) => k.kid);
    expect(published.sort()).toEqual([oldKid, rotated.key.kid].sort());

    const late = await fetch(seller.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...signed.headers }, body });
    expect(late.status).toBe(200);
    expect(records(stack, 'get_products').at(-1)).toMatchObject({ outcome: 'verified', keyid: oldKid });
    expect(seller.requestSignatures!.jwksFetches()).toBe(fetchedBefore); // from the cache

    await buyLive(orch, agentId);
    await eventually(async () => (records(stack!, 'create_media_buy').length === 2 ? true : undefined));
    expect(records(stack, 'create_media_buy').at(-1)).toMatchObject({ outcome: 'verified', keyid: rotated.key.kid });
    expect(seller.requestSignatures!.jwksFetches()).toBe(fetchedBefore + 1); // the unknown kid fetched the JWKS again
  });
});
