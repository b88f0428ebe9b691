/**
 * The dashboard over real HTTP, without a browser: sessions stored only as hashes,
 * cookie attributes, CSRF on every form, a session acting as its key (and ending
 * with it), expiry, GETs that change nothing, escaping, and the session stream.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { csrfIn, DashboardClient } from '../helpers/dashboard-client.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { newOperationRow } from '../../src/store/operation-row.js';

describe('dashboard sessions and forms', () => {
  let orch: TestOrchestrator;
  let seller: SandboxSeller;
  let agentId: string;
  let skew = 0;

  beforeAll(async () => {
    orch = await startOrchestrator({ env: { ADCP_ORCH_SESSION_TTL_MS: '600000' }, clock: { now: () => Date.now() + skew, random: Math.random } });
    seller = await startSandboxSeller({ port: 0 });
    agentId = await orch.registerAgent({ url: seller.url });
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  const client = () => new DashboardClient(orch.url);
  const keyFor = (name: string, role: 'viewer' | 'operator' | 'approver' | 'admin') => orch.app.store.tenants.createApiKey(orch.tenantId, { name, role });
  const sessionRows = () => orch.app.store.db.kysely.selectFrom('sessions').selectAll().execute();

  it('stores only the hash of the session token, in a cookie that is HttpOnly, SameSite=Strict, Path=/ (Secure over HTTPS)', async () => {
    const c = client();
    const login = await c.get('/login');
    const signIn = await c.post('/login', { _csrf: csrfIn(login.text), api_key: orch.apiKey });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/operations');
    const setCookie = signIn.headers.getSetCookie().find((l) => l.startsWith('adcp_session='))!;
    expect(setCookie).toMatch(/; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
    const token = c.cookies.get('adcp_session')!;
    expect(token).toMatch(/^aos_[A-Za-z0-9_-]{43}$/);
    const rows = await sessionRows();
    const mine = rows.find((r) => r.token_hash === createHash('sha256').update(token).digest('hex'));
    expect(mine).toBeDefined();
    expect(JSON.stringify(rows)).not.toContain(token);

    const proxied = client();
    const viaProxy = await proxied.get('/login', { 'x-forwarded-proto': 'https' });
    const secure = await proxied.post('/login', { _csrf: csrfIn(viaProxy.text), api_key: orch.apiKey }, { 'x-forwarded-proto': 'https' });
    expect(secure.headers.getSetCookie().find((l) => l.startsWith('adcp_session='))).toMatch(/; Secure$/);
  });

  it('refuses a sign-in form without its CSRF token, or with another browser’s, and opens no session', async () => {
    const before = (await sessionRows()).length;
    const c = client();
    await c.get('/login');
    const missing = await c.post('/login', { api_key: orch.apiKey });
    expect(missing.status).toBe(403);
    expect(missing.text).toContain('it carried no CSRF token');
    const other = client();
    const page = await other.get('/login');
    const foreign = await c.post('/login', { _csrf: csrfIn(page.text) + 'x', api_key: orch.apiKey });
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain('does not match this browser');
    expect(c.cookies.has('adcp_session')).toBe(false);
    expect((await sessionRows()).length).toBe(before);
  });

  it('refuses a wrong key with a clear message and never writes the key back into the page', async () => {
    const c = client();
    const wrong = 'aok_not-a-key-we-issued-aaaaaaaaaaaaaaaaaaaaaaaaaa';
    const res = await c.post('/login', { _csrf: csrfIn((await c.get('/login')).text), api_key: wrong });
    expect(res.status).toBe(401);
    expect(res.text).toContain('That API key was not recognised');
    expect(res.text).not.toContain(wrong);
  });

  it('acts as its key: the role decides, the key’s name is the actor, and forms need the session’s CSRF token', async () => {
    const operatorKey = await keyFor('desk-operator', 'operator');
    const c = client();
    expect((await c.signIn(operatorKey)).status).toBe(303);
    const buy = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_input_required') });
    const id = buy.body.id as string;
    await waitForStatus(orch, id, ['input-required']);
    const page = await c.get(`/operations/${id}`);
    expect(page.status).toBe(200);
    const csrf = csrfIn(page.text);

    const noToken = await c.post(`/operations/${id}/cancel`, { reason: 'no token' });
    expect(noToken.status).toBe(403);
    expect(noToken.text).toContain('it carried no CSRF token');
    const otherSession = client();
    await otherSession.signIn(operatorKey);
    const stolen = await otherSession.post(`/operations/${id}/cancel`, { _csrf: csrf, reason: 'another session’s token' });
    expect(stolen.status).toBe(403);
    expect(stolen.text).toContain('does not belong to your session');
    expect((await orch.api('GET', `/v1/operations/${id}`)).body.status).toBe('input-required');

    const done = await c.post(`/operations/${id}/cancel`, { _csrf: csrf, reason: 'flight dates changed' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/operations/${id}?notice=canceled`);
    const op = (await orch.api('GET', `/v1/operations/${id}`)).body;
    expect(op.status).toBe('canceled');
    expect(op.events.at(-1)).toMatchObject({ source: 'user', to: 'canceled', actor: 'desk-operator', detail: { reason: 'flight dates changed' } });
  });

  it('ends a session when its key is gone, and at sign-out', async () => {
    const key = await keyFor('short-lived', 'viewer');
    const c = client();
    await c.signIn(key);
    expect((await c.get('/operations')).status).toBe(200);
    const stored = (await orch.app.store.tenants.findApiKey(key))!;
    await orch.app.store.db.kysely.deleteFrom('api_keys').where('id', '=', stored.key.id).execute();
    const after = await c.get('/operations');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/login?reason=required&next=%2Foperations');

    const d = client();
    await d.signIn(orch.apiKey);
    const token = d.cookies.get('adcp_session')!;
    const out = await d.post('/logout', { _csrf: csrfIn((await d.get('/operations')).text) });
    expect(out.headers.get('location')).toBe('/login?reason=signed_out');
    const reused = await fetch(`${orch.url}/operations`, { headers: { cookie: `adcp_session=${token}` }, redirect: 'manual' });
    expect(reused.status).toBe(303);
  });

  it('never changes anything on a GET', async () => {
    const c = client();
    await c.signIn(orch.apiKey);
    const snapshot = async () => {
      const k = orch.app.store.db.kysely;
      return {
        operations: await k.selectFrom('operations').select(['id', 'status', 'updated_at', 'next_check_at', 'needs_input']).orderBy('id').execute(),
        events: (await k.selectFrom('operation_events').select('id').execute()).length,
        notifications: (await k.selectFrom('notifications').select('seq').execute()).length,
        sessions: (await k.selectFrom('sessions').select('token_hash').execute()).length,
        keys: (await k.selectFrom('api_keys').select('id').execute()).length,
      };
    };
    const ops = await orch.api('GET', '/v1/operations');
    const ended = ops.body.operations.find((o: { status: string }) => o.status === 'canceled');
    const before = await snapshot();
    // A GET to a form's address is not the form: nothing answers it but "not found".
    for (const path of ['/', '/operations', `/operations/${ended.id}`, '/inbox', '/agents', '/login', `/operations/${ended.id}/cancel`, '/logout']) {
      const res = await c.get(path);
      expect(res.status, path).toBeLessThan(500);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('escapes what agents and keys name themselves, and sends a strict Content-Security-Policy', async () => {
    const evil = '<script>alert("x")</script>';
    await orch.api('POST', '/v1/agents', { name: evil, role: 'seller', protocol: 'mcp', url: 'http://127.0.0.1:9/mcp' });
    const c = client();
    await c.signIn(await keyFor(`"><img src=x onerror=alert(1)>`, 'viewer'));
    const page = await c.get('/agents');
    expect(page.text).not.toContain(evil);
    expect(page.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(page.text).not.toContain('<img src=x');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('server-timing')).toMatch(/^app;dur=\d+(\.\d+)?$/);
  });

  it('answers a live refresh with the region only, and the inbox count out of band', async () => {
    const c = client();
    await c.signIn(orch.apiKey);
    const res = await c.get('/operations', { 'hx-request': 'true' });
    expect(res.text).not.toContain('<html');
    expect(res.text).toContain('<table class="ops">');
    expect(res.text).toMatch(/<span id="inbox-count" class="count" hx-swap-oob="true">/);
  });

  it('streams changes to a signed-in page, and to nobody else', async () => {
    const anonymous = await fetch(`${orch.url}/live`, { headers: { accept: 'text/event-stream' } });
    expect(anonymous.status).toBe(401);
    await anonymous.body?.cancel();

    const c = client();
    await c.signIn(orch.apiKey);
    const controller = new AbortController();
    const res = await fetch(`${orch.url}/live`, { headers: { cookie: c.cookieHeader(), accept: 'text/event-stream' }, signal: controller.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const buy = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant') });
    let text = '';
    while (!text.includes(buy.body.id)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    expect(text).toMatch(/event: change\nid: \d+\ndata: \{"operations":\[[^\]]*"[0-9a-f-]{36}"/);
  });

  it('tells a person whose session expired so, on a page and on a form, and then signs them in again', async () => {
    const c = client();
    await c.signIn(orch.apiKey);
    const page = await c.get('/operations');
    skew += 600_001;
    try {
      const form = await c.post('/logout', { _csrf: csrfIn(page.text) });
      expect(form.status).toBe(401);
      expect(form.text).toContain('Your session has expired, so this was not done');
      const next = await c.get('/agents');
      expect(next.status).toBe(303);
      expect(next.headers.get('location')).toBe('/login?reason=expired&next=%2Fagents');
      const login = await c.get(next.headers.get('location')!);
      expect(login.text).toContain('Your session has expired. Sign in again to continue.');
      expect(login.text).toContain('name="next" value="/agents"');
      const again = await c.post('/login', { _csrf: csrfIn(login.text), api_key: orch.apiKey, next: '/agents' });
      expect(again.headers.get('location')).toBe('/agents');
      expect((await c.get('/agents')).status).toBe(200);
    } finally {
      skew = 0;
    }
  });

  it('pages the list by keyset links that keep the filters, and says when a page link is not one of ours', async () => {
    const tenant = (await orch.app.store.tenants.ensureTenant('paging-tenant')).id;
    const agent = await orch.app.store.agents.insert({ tenantId: tenant, name: 'pager', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' });
    const ids: string[] = [];
    for (let i = 0; i < 57; i++) {
      const id = randomUUID();
      ids.push(id);
      const row = newOperationRow({ id, tenant_id: tenant, agent_id: agent.id, type: 'get_products', idempotency_key: id, request_body: '{}', created_at: 1_000_000 + Math.floor(i / 3) }, { status: 'completed' });
      await orch.app.store.operations.insert(row, { source: 'user', kind: 'created' });
    }
    const c = client();
    await c.signIn(await orch.app.store.tenants.createApiKey(tenant, { name: 'pager', role: 'viewer' }));
    const rowsOf = (text: string) => [...text.matchAll(/<tr data-operation-id="([^"]+)"/g)].map((m) => m[1]);
    const first = await c.get('/operations?status=completed&type=get_products');
    const older = /<a rel="next" href="([^"]+)">/.exec(first.text)![1]!.replace(/&amp;/g, '&');
    expect(older).toMatch(/^\/operations\?status=completed&type=get_products&cursor=/);
    const second = await c.get(older);
    expect(second.text).not.toContain('rel="next"');
    expect(second.text).toContain('← Newest');
    const seen = [...rowsOf(first.text), ...rowsOf(second.text)];
    expect(seen).toHaveLength(57);
    expect(new Set(seen)).toEqual(new Set(ids));
    const bad = await c.get('/operations?cursor=not-ours');
    expect(bad.text).toContain('Ignored a page link that is not one of ours.');
    expect(rowsOf(bad.text)).toHaveLength(50);
  });

  it('sends a person back only to a page of its own after sign-in', async () => {
    for (const next of ['https://evil.example/', '//evil.example/x', '/\\evil.example']) {
      const c = client();
      const login = await c.get(`/login?next=${encodeURIComponent(next)}`);
      expect(login.text).not.toContain('evil.example');
      const res = await c.post('/login', { _csrf: csrfIn(login.text), api_key: orch.apiKey, next });
      expect(res.headers.get('location')).toBe('/operations');
    }
  });
});
