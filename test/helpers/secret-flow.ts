/**
 * One run through every way a secret enters the orchestrator, over its HTTP API,
 * for the tests that then look for those secrets where they must not be (the
 * database, the logs, API answers): agents registered with tokens (once under an
 * Idempotency-Key and replayed), bad agent input carrying a token, requests with
 * wrong API keys, HMAC and Bearer media buys against the sandbox seller (with a
 * reporting webhook credential of the caller's own) completed by their webhooks,
 * calls to an agent that echoes everything back in its errors (refused, and
 * retried), a call with a token the seller refuses, a person's answer with a
 * credential sent back on an A2A continuation, forged webhooks, and a
 * notification subscription (its URL's query is a credential, its secret is shown once).
 *
 * Returns every secret it saw go in, and the text of every answer the API gave.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { SandboxSeller } from '../../src/sandbox/seller.js';
import type { EchoAgent } from './echo-agent.js';
import { mediaBuyRequest } from './media-buy.js';
import { eventually } from './orchestrator.js';
import { toolCalls } from './raw-calls.js';

const random = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`;

export interface SecretFlowInput {
  baseUrl: string;
  apiKey: string;
  /** The key ADCP_ORCH_SECRET_KEY holds. */
  secretKey: string;
  /** A sandbox seller started with `authToken: sellerToken` and `onMcpRequest` pushing into `sellerBodies`. */
  seller: SandboxSeller;
  sellerToken: string;
  sellerBodies: string[];
  echo: EchoAgent;
}

export interface SecretFlowResult {
  /** Secrets that must appear nowhere: not in the database, logs or answers. */
  secrets: Record<string, string>;
  /** Webhook URL tokens: stored (they are the URL), but never logged or returned. */
  webhookTokens: string[];
  /** Raw text of every HTTP answer, and of every notification sent to the subscription. */
  answers: string[];
  operationIds: string[];
}

export async function runSecretFlow(input: SecretFlowInput): Promise<SecretFlowResult> {
  const answers: string[] = [];
  const secrets: Record<string, string> = {
    apiKey: input.apiKey,
    secretKey: input.secretKey,
    sellerToken: input.sellerToken,
    wrongApiKey: random('aok_'),
    tokenSentWithWrongKey: random('tok-'),
    tokenInBadInput: random('tok-'),
    echoToken: random('tok-'),
    refusedToken: random('tok-'),
    reportingCredentials: random('rep-'),
    reportingToken: random('rtk-'),
    forgedWebhookCredentials: random('forged-'),
    // A receiver authenticating by a token in its URL's query.
    subscriptionUrlToken: random('hook-'),
    answerCredentials: random('ans-'),
  };

  /** `shownOnce`: the answer that hands out a secret by design (a new subscription's), kept out of `answers`. */
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, shownOnce = false) => {
    const res = await fetch(`${input.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${input.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    if (!shownOnce) answers.push(text);
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  // A subscription (its URL's query is a credential; its signing secret is shown once, and again on an idempotent replay).
  const subscription = { url: `${input.echo.origin}/hooks?token=${secrets.subscriptionUrlToken}` };
  const subscribed = await call('POST', '/v1/subscriptions', subscription, { 'idempotency-key': 'subscribe-1' }, true);
  expect(subscribed.status).toBe(201);
  expect(subscribed.body.secret).toMatch(/^whsec_/);
  secrets.subscriptionSecret = subscribed.body.secret;
  expect((await call('POST', '/v1/subscriptions', subscription, { 'idempotency-key': 'subscribe-1' }, true)).body.secret).toBe(secrets.subscriptionSecret);
  const agent = (name: string, url: string, protocol: 'mcp' | 'a2a', token: string, extra: Record<string, unknown> = {}) =>
    ({ name, role: 'seller', url, protocol, auth: { scheme: 'bearer', token }, ...extra });

  // Wrong keys, one of them on a request that carries a token.
  expect((await call('GET', '/v1/agents', undefined, { authorization: `Bearer ${secrets.wrongApiKey}` })).status).toBe(401);
  const wrongKeyPost = await call('POST', '/v1/agents', agent('x', input.seller.url, 'mcp', secrets.tokenSentWithWrongKey), { authorization: `Bearer ${secrets.wrongApiKey}` });
  expect(wrongKeyPost.status).toBe(401);
  expect((await call('GET', '/v1/operations', undefined, { authorization: `Basic ${Buffer.from(`u:${secrets.wrongApiKey}`).toString('base64')}` })).status).toBe(401);

  // Bad input that carries a token: refused, token not echoed.
  const badScheme = await call('POST', '/v1/agents', { ...agent('bad', input.seller.url, 'mcp', secrets.tokenInBadInput), auth: { scheme: 'basic', token: secrets.tokenInBadInput } });
  expect(badScheme.status).toBe(400);
  for (const auth of [{ scheme: 'bearer', tokn: secrets.tokenInBadInput }, { scheme: 'bearer', token: secrets.tokenInBadInput.repeat(200) }, { scheme: 'bearer', token: secrets.tokenInBadInput, extra: 1 }]) {
    expect((await call('POST', '/v1/agents', { ...agent('bad', input.seller.url, 'mcp', ''), auth })).status).toBe(400);
  }

  // Agents with tokens; the first under an Idempotency-Key, replayed.
  const sellerAgent = agent('seller', input.seller.url, 'mcp', input.sellerToken, { webhook_signing: { jwks_uri: input.seller.jwksUrl } });
  const registered = await call('POST', '/v1/agents', sellerAgent, { 'idempotency-key': 'register-seller-1' });
  expect(registered.status).toBe(201);
  const replayed = await call('POST', '/v1/agents', sellerAgent, { 'idempotency-key': 'register-seller-1' });
  expect(replayed.body.id).toBe(registered.body.id);
  const sellerId = registered.body.id as string;
  const echoId = (await call('POST', '/v1/agents', agent('echo', input.echo.url, 'a2a', secrets.echoToken))).body.id as string;
  const busyId = (await call('POST', '/v1/agents', agent('busy', input.echo.busyUrl, 'a2a', secrets.echoToken))).body.id as string;
  const refusedId = (await call('POST', '/v1/agents', agent('refused', input.seller.url, 'mcp', secrets.refusedToken))).body.id as string;
  const a2aSellerId = (await call('POST', '/v1/agents', agent('seller-a2a', input.seller.a2aUrl!, 'a2a', input.sellerToken))).body.id as string;

  // HMAC and Bearer buys against the seller, one with the caller's own reporting credentials.
  const reporting = {
    reporting_webhook: {
      url: 'https://buyer.example/reports',
      token: secrets.reportingToken,
      authentication: { schemes: ['Bearer'], credentials: secrets.reportingCredentials },
      reporting_frequency: 'daily',
    },
  };
  const hmacBody = { agent_id: sellerId, request: mediaBuyRequest('sandbox_submitted', reporting), webhook: 'hmac' };
  const hmac = await call('POST', '/v1/media-buys', hmacBody, { 'idempotency-key': 'buy-hmac-1' });
  expect(hmac.status).toBe(202);
  expect((await call('POST', '/v1/media-buys', hmacBody, { 'idempotency-key': 'buy-hmac-1' })).body.id).toBe(hmac.body.id);
  expect((await call('POST', '/v1/media-buys', { ...hmacBody, webhook: 'bearer' }, { 'idempotency-key': 'buy-hmac-1' })).status).toBe(409);
  const bearer = await call('POST', '/v1/media-buys', { agent_id: sellerId, request: mediaBuyRequest('sandbox_submitted'), webhook: 'bearer' });
  expect(bearer.status).toBe(202);
  const echoed = await call('POST', '/v1/media-buys', { agent_id: echoId, request: mediaBuyRequest('sandbox_instant'), webhook: 'hmac' });
  const busy = await call('POST', '/v1/media-buys', { agent_id: busyId, request: mediaBuyRequest('sandbox_instant'), webhook: 'bearer' });
  const refused = await call('POST', '/v1/media-buys', { agent_id: refusedId, request: mediaBuyRequest('sandbox_instant'), webhook: 'hmac' });
  const asking = await call('POST', '/v1/media-buys', { agent_id: a2aSellerId, request: mediaBuyRequest('sandbox_input_required'), webhook: 'hmac' });
  const operationIds = [hmac, bearer, echoed, busy, refused, asking].map((r) => r.body.id as string);

  const operation = (id: string) => call('GET', `/v1/operations/${id}`).then((r) => r.body);
  const until = (id: string, done: (op: any) => boolean) => eventually(async () => ((op) => (done(op) ? op : undefined))(await operation(id)), 30_000, 100);
  for (const r of [hmac, bearer]) {
    const op = await until(r.body.id, (o) => o.status === 'completed');
    expect(op.events.at(-1).source).toBe('webhook');
  }
  const echoedOp = await until(echoed.body.id, (o) => o.status === 'failed');
  // The agent did echo what we sent; what we kept and show says "[redacted]" instead.
  expect(echoedOp.error.message).toContain('invalid params in');
  expect(echoedOp.error.message).toContain('[redacted]');
  const busyOp = await until(busy.body.id, (o) => o.events.some((e: any) => e.kind === 'send_failed'));
  expect(JSON.stringify(busyOp.events)).toContain('invalid params in');
  await until(refused.body.id, (o) => o.status === 'failed');

  // A person answers the seller's question with corrected params carrying a credential; the answer
  // goes back on the A2A continuation as the whole request again (our HMAC secret in it).
  await until(asking.body.id, (o) => o.status === 'input-required');
  const correction = { reporting_webhook: { ...reporting.reporting_webhook, token: undefined, authentication: { schemes: ['Bearer'], credentials: secrets.answerCredentials } } };
  expect((await call('POST', `/v1/operations/${asking.body.id}/input`, { decision: 'respond', params: correction })).status).toBe(202);
  const answeredOp = await until(asking.body.id, (o) => o.status === 'completed');
  expect(answeredOp.events.map((e: any) => e.kind)).toContain('answer_sent');
  expect(answeredOp.events.find((e: any) => e.kind === 'answered').detail.params.reporting_webhook.authentication.credentials).toBe('[redacted]');
  const askedTask = input.seller.getTask(asking.body.task_id)!;
  secrets.webhookSecretOfAnswered = askedTask.push!.authentication!.credentials!;

  // The secrets and URL tokens that went out, as the agents received them.
  const sellerCalls = toolCalls(input.sellerBodies, 'create_media_buy');
  type Hook = { url: string; authentication: { schemes: string[]; credentials: string } };
  // (Reconciliation, on in a `serve` process, also lists the echo agents' tasks: those calls carry no webhook.)
  const echoedBuys = input.echo.calls
    .map((c) => JSON.parse(c))
    .filter((m) => m.method === 'message/send')
    .map((m) => m.params.message.parts[0].data)
    .filter((d) => d.skill === 'create_media_buy');
  const sent = [...sellerCalls.map((c) => c.args), ...echoedBuys.map((d) => d.input)];
  // One per operation that reached an agent (the busy one's retries repeat its own).
  const hooks = [...new Map(sent.map((args) => [args.push_notification_config.url, args.push_notification_config as Hook])).values()];
  expect(hooks).toHaveLength(4);
  hooks.forEach((h, i) => (secrets[`webhookSecret${i}`] = h.authentication.credentials));
  const webhookTokens = [...hooks, askedTask.push!].map((h) => h.url.split('/').at(-1)!);
  // Our own reporting webhooks (on the buys that did not bring theirs): their secrets and URL tokens too.
  const ourReporting = [...new Map(sent.map((a) => a.reporting_webhook).filter((r) => r?.url?.includes('/webhooks/adcp/reporting/')).map((r) => [r.url, r as Hook])).values()];
  expect(ourReporting.length).toBeGreaterThan(0);
  ourReporting.forEach((r, i) => {
    secrets[`reportingSecret${i}`] = r.authentication.credentials;
    webhookTokens.push(r.url.split('/').at(-1)!);
  });
  // The seller got the caller's own credentials in clear: they are unsealed for the call.
  expect(sellerCalls[0].args.reporting_webhook.authentication.credentials).toBe(secrets.reportingCredentials);
  for (const t of webhookTokens) expect(t).toMatch(/^[A-Za-z0-9_-]{32}$/);
  for (const [name, value] of Object.entries(secrets)) expect(value.length, name).toBeGreaterThanOrEqual(16);

  // Forged deliveries at the real URLs: refused.
  const bearerHook = sellerCalls.find((c) => c.args.push_notification_config.authentication.schemes[0] === 'Bearer')!.args.push_notification_config as Hook;
  const hmacHook = sellerCalls.find((c) => c.args.push_notification_config.authentication.schemes[0] === 'HMAC-SHA256')!.args.push_notification_config as Hook;
  const forged = '{"task_id":"t","status":"completed"}';
  const forgedBearer = await fetch(bearerHook.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${secrets.forgedWebhookCredentials}` }, body: forged });
  answers.push(await forgedBearer.text());
  expect(forgedBearer.status).toBe(401);
  const forgedHmac = await fetch(hmacHook.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-adcp-timestamp': String(Math.floor(Date.now() / 1000)), 'x-adcp-signature': `sha256=${'0'.repeat(64)}` },
    body: forged,
  });
  answers.push(await forgedHmac.text());
  expect(forgedHmac.status).toBe(401);

  // The subscription is notified of the operations' changes (signed with its secret, at its secret URL);
  // what it is sent is an answer of ours too, read by a third party: it is checked like the API's.
  const notifications = () => input.echo.calls.filter((c) => c.includes('"type":"operation.') && !c.includes('"message/send"'));
  await eventually(async () => (notifications().some((c) => c.includes('"type":"operation.completed"')) ? true : undefined), 30_000, 100);

  // Everything the API shows about them.
  await call('GET', '/v1/subscriptions');
  await call('GET', `/v1/subscriptions/${subscribed.body.id}`);
  await call('GET', `/v1/subscriptions/${subscribed.body.id}/deliveries`);
  await call('GET', '/v1/agents');
  for (const id of [sellerId, echoId, busyId, refusedId]) await call('GET', `/v1/agents/${id}`);
  await call('GET', '/v1/operations');
  for (const id of operationIds) await operation(id);
  const buys = await call('GET', '/v1/media-buys');
  expect(buys.body.media_buys.length).toBeGreaterThan(0);
  for (const b of buys.body.media_buys) await call('GET', `/v1/media-buys/${b.id}`);
  answers.push(...notifications());
  return { secrets, webhookTokens, answers, operationIds };
}

/** The names of the secrets that occur in `text` (none, when all is well). */
export function secretsIn(text: string | Buffer, secrets: Record<string, string>, extra: string[] = []): string[] {
  const all = Object.entries(secrets).concat(extra.map((v, i) => [`webhookToken${i}`, v] as [string, string]));
  return all.filter(([, v]) => text.includes(v)).map(([k]) => k);
}
