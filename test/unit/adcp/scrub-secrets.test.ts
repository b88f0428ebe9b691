import { describe, expect, it } from 'vitest';
import { scrubbingClient, scrubError, scrubReply, scrubSecrets, secretsOfCall } from '../../../src/adcp/scrub-secrets.js';
import { AdcpTransportError, type AdcpClient, type AgentEndpoint, type TaskReply } from '../../../src/adcp/types.js';

const TOKEN = 'agent-token-0123456789abcdef';
const HMAC = 'hmac-secret-0123456789abcdefghijklmnopq';
const HOOK = 'https://orch.example/webhooks/adcp/Zk3v0wq8h2mN5pL7rT1xY4bC6dE9fG0h';
const agent: AgentEndpoint = { url: 'http://seller.example/mcp', protocol: 'mcp', authToken: TOKEN };
const params = {
  account: { account_id: 'acc_1' },
  push_notification_config: { url: HOOK, authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC } },
};

describe('scrubbing what agents answer', () => {
  it('knows the secrets of a call: the token, the credentials in the request, the webhook URL', () => {
    expect(secretsOfCall(agent, params).sort()).toEqual([HMAC, HOOK, TOKEN].sort());
    expect(secretsOfCall({ ...agent, authToken: undefined })).toEqual([]);
  });

  it('replaces them at any depth, keys included, and leaves the rest', () => {
    const reply = { message: `bad config ${JSON.stringify(params)}`, errors: [{ code: 'X', details: { [TOKEN]: `Bearer ${TOKEN}` } }], n: 5 };
    const clean = scrubSecrets(reply, secretsOfCall(agent, params));
    const text = JSON.stringify(clean);
    for (const s of [TOKEN, HMAC, HOOK]) expect(text).not.toContain(s);
    expect(clean.n).toBe(5);
    expect(clean.errors[0].details).toEqual({ '[redacted]': 'Bearer [redacted]' });
    expect(clean.message).toContain('"account_id":"acc_1"');
  });

  it("scrubs a large reply on its data's JSON text, keeping the two in step, and the rest of the reply as well", () => {
    const data = { products: [{ product_id: 'p1', note: `echo ${HOOK}` }] };
    const reply: TaskReply = { status: 'completed', data, dataJson: JSON.stringify(data), message: `token ${TOKEN}` };
    const clean = scrubReply(reply, secretsOfCall(agent, params));
    expect(clean.dataJson).toBe(JSON.stringify(clean.data));
    expect(clean.data).toEqual({ products: [{ product_id: 'p1', note: 'echo [redacted]' }] });
    expect(clean.message).toBe('token [redacted]');
    // Nothing to clean in the data: the very same data and text are kept (no second parse).
    const plain = { products: [{ product_id: 'p2' }] };
    const kept = scrubReply({ status: 'completed', data: plain, dataJson: JSON.stringify(plain) }, [TOKEN]);
    expect(kept.data).toBe(plain);
  });

  it('finds a secret that needs escaping in JSON', () => {
    const odd = 'tok"en\\with-quotes';
    expect(scrubSecrets({ m: `x${odd}y` }, [odd])).toEqual({ m: 'x[redacted]y' });
  });

  it('returns the very same object when nothing matches, and keeps "__proto__" an own property when something does', () => {
    const reply = JSON.parse('{"a": 1, "__proto__": {"x": "agent-token-0123456789abcdef"}}');
    const same = { a: 1 };
    expect(scrubSecrets(same, [TOKEN])).toBe(same);
    const clean = scrubSecrets(reply, [TOKEN]);
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
    expect(Object.hasOwn(clean, '__proto__')).toBe(true);
    expect(JSON.stringify(clean)).not.toContain(TOKEN);
  });

  it('rebuilds a failure without them in its message, stack or AdCP error', () => {
    const err = new AdcpTransportError(`JSON-RPC error -32602: echo ${HMAC}`, 'rpc', undefined, { code: 'INVALID', message: `auth ${TOKEN}` }, -32602);
    const clean = scrubError(err, [HMAC, TOKEN]) as AdcpTransportError;
    expect(clean).toBeInstanceOf(AdcpTransportError);
    expect(clean.kind).toBe('rpc');
    expect(clean.rpcCode).toBe(-32602);
    expect(`${clean.message} ${clean.stack} ${JSON.stringify(clean.adcpError)}`).not.toMatch(new RegExp(`${HMAC}|${TOKEN}`));
    const plain = scrubError(new TypeError(`fetch ${TOKEN}`), [TOKEN]) as Error;
    expect(plain.name).toBe('TypeError');
    expect(`${plain.message}${plain.stack}`).not.toContain(TOKEN);
  });

  it('wraps a client so replies and failures of every call come back clean', async () => {
    const echoing: AdcpClient = {
      callTask: async (_a, _t, p) => ({ status: 'completed', data: { echoed: p } }) as TaskReply,
      getTask: async () => {
        throw new AdcpTransportError(`HTTP 401: bad token ${TOKEN}`, 'http', 401);
      },
      continueTask: async (_a, c, _t, p) => ({ status: 'working', data: { text: c.text, input: p } }) as TaskReply,
      listTasks: async () => ({ tasks: [], hasMore: false, cursor: TOKEN }),
      close: async () => undefined,
    };
    const client = scrubbingClient(echoing);
    const reply = await client.callTask(agent, 'create_media_buy', params);
    expect(JSON.stringify(reply)).not.toMatch(new RegExp(`${HMAC}|${TOKEN}|${HOOK}`));
    expect((reply.data.echoed as any).account).toEqual({ account_id: 'acc_1' });
    await expect(client.getTask(agent, 't1')).rejects.toThrow('HTTP 401: bad token [redacted]');
    expect((await client.listTasks(agent, {})).cursor).toBe('[redacted]');
    const continued = await client.continueTask(agent, { taskId: 'a2a-1', contextId: 'ctx-1', messageId: 'm1', text: `approved ${TOKEN}` }, 'create_media_buy', params);
    expect(JSON.stringify(continued)).not.toMatch(new RegExp(`${HMAC}|${TOKEN}|${HOOK}`));
  });
});
