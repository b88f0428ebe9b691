/**
 * The AdCP A2A profile v3 vectors against real traffic (the vectors' own verdicts on the
 * rules used here are checked in test/unit/sandbox/a2a-profile-vectors.test.ts):
 *
 * - Buyer side (our client, src/adcp): each valid invocation vector is what our client
 *   sends for that task, activation header included, captured by a loopback agent; the
 *   valid response vectors are what that agent answers, and our client reads the AdCP
 *   task handle from the DataPart as the vector expects.
 * - Seller side (the sandbox with `a2aRequireProfile`): its card is a valid advertisement;
 *   every invocation vector sent to it is let through or refused as the vector says; its
 *   replies to a submitted create and to the poll keep the response rules.
 *
 * Not applicable: the invalid invocation vectors on the buyer side (they are requests a
 * seller must refuse; our client's requests are checked by the same rule and pass), the
 * advertisement vectors on the buyer side (our client activates the profile on every
 * request without reading the declaration: activating an extension an agent does not
 * support is ignored by A2A), and `bare-send-message-task-invalid` on the seller side:
 * the sandbox speaks A2A 0.3 JSON-RPC, where `message/send`'s result *is* the bare Task
 * (the `{task}` branch is A2A 1.0's SendMessageResponse); its replies are read in the
 * 1.0 form for the other rules.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdcpClient } from '../../src/adcp/client.js';
import type { AdcpClient, AgentEndpoint } from '../../src/adcp/types.js';
import { profileRefusal } from '../../src/sandbox/a2a-profile.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { advertisementError, extensionsIn, loadProfileVectors, responseError, toA2a03Message, toA2a10Message, toA2a10Response } from '../helpers/a2a-profile-vectors.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { readBodyText } from '../helpers/request-body.js';

type Json = any;

const vectors = loadProfileVectors();
const URI = vectors.extension_uri;
const invocation = (id: string) => vectors.invocation_vectors.find((v) => v.id === id)!;
const response = (id: string) => vectors.response_vectors.find((v) => v.id === id)!;
const dataPartOf = (message: Json) => message.parts.find((p: Json) => 'data' in p).data as { skill: string; input: Record<string, unknown> };

describe('buyer side: what our client sends and reads', () => {
  let server: Server;
  let agent: AgentEndpoint;
  let client: AdcpClient;
  const requests: Array<{ headers: IncomingHttpHeaders; body: Json }> = [];

  beforeAll(async () => {
    // Answers as a profile seller would: the valid response vectors, chosen by the skill invoked.
    server = createServer(async (req, res) => {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      if (req.method === 'GET') {
        const card = { ...vectors.advertisement_vectors.find((v) => v.valid)!.agent_card, url: `${origin}/a2a`, protocolVersion: '0.3.0' };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
        return;
      }
      const body = JSON.parse(await readBodyText(req));
      requests.push({ headers: req.headers, body });
      const skill = dataPartOf(body.params.message).skill;
      const result =
        skill === 'get_task_status'
          ? response('completed-get-task-status-result').response
          : skill === 'create_media_buy'
            ? response('submitted-inside-completed-a2a-task').response
            : { task: { ...response('bare-send-message-task-invalid').response } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    agent = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a`, protocol: 'a2a' };
    client = createAdcpClient();
  });
  afterAll(async () => {
    await client?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  /** The one request a client call made: activation checked, the message in the vectors' (A2A 1.0) form. */
  const sent = async (call: () => Promise<unknown>) => {
    const before = requests.length;
    await call();
    expect(requests).toHaveLength(before + 1);
    const { headers, body } = requests.at(-1)!;
    expect(extensionsIn(headers['a2a-extensions'])).toContain(URI);
    // Judged by the same rule the sandbox refuses by (itself checked against every invocation vector).
    expect(profileRefusal(headers, body)).toBeUndefined();
    expect(body.method).toBe('message/send');
    return toA2a10Message(body.params.message);
  };

  it('activated-structured-invocation: one {skill, input} DataPart, activated', async () => {
    const v = invocation('activated-structured-invocation');
    const { skill, input } = dataPartOf(v.message);
    const message = await sent(() => client.callTask(agent, skill, input, { requestChecked: true }));
    expect(message.messageId).toEqual(expect.any(String));
    expect(message).toEqual({ ...v.message, messageId: message.messageId });
  });

  it('activated-invocation-with-advisory-text: the same invocation (senders SHOULD omit the display text, and we do)', async () => {
    const v = invocation('activated-invocation-with-advisory-text');
    const { skill, input } = dataPartOf(v.message);
    const message = await sent(() => client.callTask(agent, skill, input, { requestChecked: true }));
    expect(message).toEqual({ ...v.message, messageId: message.messageId, parts: v.message.parts.filter((p: Json) => 'data' in p) });
  });

  it('get-task-status-poll: a fresh activated get_task_status invocation, read as completed-get-task-status-result says', async () => {
    const v = invocation('get-task-status-poll');
    const expected = response('completed-get-task-status-result');
    let reply: Awaited<ReturnType<AdcpClient['getTask']>> | undefined;
    const message = await sent(async () => (reply = await client.getTask(agent, dataPartOf(v.message).input.task_id as string)));
    expect(message).toEqual({ ...v.message, messageId: message.messageId });
    expect(reply).toMatchObject({ status: 'completed', taskId: expected.expected_adcp_task_id });
  });

  it('input-required-continuation: the task and context ids kept, our new message id, the typed input resent', async () => {
    const v = invocation('input-required-continuation');
    const { skill, input } = dataPartOf(v.message);
    const message = await sent(() =>
      client.continueTask(agent, { taskId: v.message.taskId, contextId: v.message.contextId, messageId: v.message.messageId }, skill, input, { requestChecked: true }),
    );
    expect(message).toEqual(v.message);
  });

  it('submitted-inside-completed-a2a-task: the AdCP handle is read from the DataPart, apart from the A2A task id', async () => {
    const expected = response('submitted-inside-completed-a2a-task');
    let reply: Awaited<ReturnType<AdcpClient['callTask']>> | undefined;
    await sent(async () => (reply = await client.callTask(agent, 'create_media_buy', mediaBuyRequest('p1'), { requestChecked: true })));
    expect(reply).toMatchObject({ status: 'submitted', taskId: expected.expected_adcp_task_id, a2a: { taskId: expected.response.task.id } });
  });
});

describe('seller side: the sandbox requiring the profile', () => {
  let seller: SandboxSeller;
  let rpcId = 0;

  beforeAll(async () => {
    seller = await startSandboxSeller({ a2aRequireProfile: true, submittedDelayMs: 200 });
  });
  afterAll(async () => seller?.close());

  const post = async (headers: Record<string, string>, method: string, params: unknown) => {
    const res = await fetch(seller.a2aUrl!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
    });
    return { echo: res.headers.get('a2a-extensions'), rpc: (await res.json()) as Json };
  };
  const activated = { 'A2A-Extensions': URI };
  const create = (productId: string) =>
    post(activated, 'message/send', {
      message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'data', data: { skill: 'create_media_buy', input: { ...mediaBuyRequest(productId), idempotency_key: `key-${crypto.randomUUID()}` } } }] },
    });

  it('advertisement: its card declares the profile as agent-card-capabilities-extension does', async () => {
    const card = await (await fetch(`${seller.a2aUrl}/.well-known/agent-card.json`)).json();
    expect(advertisementError(card, URI)).toBeNull();
  });

  it.each(vectors.invocation_vectors.filter((v) => v.id !== 'input-required-continuation').map((v) => [v.id, v] as const))(
    'invocation %s: let through or refused as the vector says',
    async (_id, v) => {
      const { rpc, echo } = await post(v.headers, 'message/send', { message: toA2a03Message(v.message) });
      if (v.valid) {
        expect(rpc.error).toBeUndefined();
        expect(rpc.result.kind).toBe('task');
        expect(echo).toBe(URI);
        return;
      }
      expect(rpc.id).toBe(rpcId);
      expect(rpc.error).toMatchObject({ code: v.expected_error === 'extension_not_activated' ? -32008 : -32602, data: { reason: v.expected_error } });
    },
  );

  it('invocation input-required-continuation: taken on the open task (its ids stand in for the vector\'s)', async () => {
    const v = invocation('input-required-continuation');
    const asked = (await create('sandbox_input_required')).rpc.result;
    expect(asked.status.state).toBe('input-required');
    const { rpc } = await post(v.headers, 'message/send', { message: toA2a03Message({ ...v.message, taskId: asked.id, contextId: asked.contextId }) });
    expect(rpc.error).toBeUndefined();
    expect(rpc.result.id).toBe(asked.id);
  });

  it('every other method must activate it too: tasks/get without it is refused, with it answered', async () => {
    const asked = (await create('sandbox_input_required')).rpc.result;
    const refused = await post({}, 'tasks/get', { id: asked.id });
    expect(refused.rpc.error).toMatchObject({ code: -32008, data: { reason: 'extension_not_activated', required_extensions: [URI] } });
    expect(refused.echo).toBeNull();
    const answered = await post(activated, 'tasks/get', { id: asked.id });
    expect(answered.rpc.result).toMatchObject({ id: asked.id, status: { state: 'input-required' } });
  });

  it('responses: a submitted create is a completed A2A task with the handle only in the DataPart, and its poll a completed invocation', async () => {
    const { rpc } = await create('sandbox_submitted');
    const submitted = toA2a10Response(rpc.result);
    const taskId = submitted.task.artifacts[0].parts[0].data.task_id;
    expect(responseError(submitted, 'submitted')).toBeNull();
    await expect.poll(() => seller.getTask(taskId)?.status, { timeout: 10_000 }).toBe('completed');
    const poll = await post(activated, 'message/send', {
      message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'data', data: { skill: 'get_task_status', input: { task_id: taskId, include_result: true } } }] },
    });
    expect(responseError(toA2a10Response(poll.rpc.result), 'get_task_status', taskId)).toBeNull();
    expect(poll.rpc.result.artifacts[0].parts[0].data).toMatchObject({ task_id: taskId, status: 'completed' });
  });
});
