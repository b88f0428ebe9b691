/**
 * A badly behaved A2A agent on loopback: it publishes an agent card, then answers
 * every call with an error that repeats the whole request body and its
 * Authorization header, as careless servers do: at `url` a JSON-RPC error (a
 * refusal, so the operation fails), at `busyUrl` an HTTP 503 with an AdCP
 * transient error (so the send is retried, and logged). Whatever we sent it
 * (webhook secrets, the webhook URL, our token for it) comes back in an error
 * that the orchestrator stores, shows and logs: the tests use it to prove that
 * what an agent answers is scrubbed of them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { peekJsonRpc, readBodyText } from './request-body.js';

export interface EchoAgent {
  origin: string;
  url: string;
  busyUrl: string;
  /** Raw bodies of the POSTs it received (A2A calls, and whatever else is sent to it). */
  calls: string[];
  close(): Promise<void>;
}

export async function startEchoAgent(): Promise<EchoAgent> {
  const calls: string[] = [];
  let origin = '';
  const server: Server = createServer(async (req, res) => {
    const body = await readBodyText(req);
    // Each endpoint's card (under it) names the endpoint itself.
    const endpoint = `/${new URL(req.url ?? '/', origin).pathname.split('/')[1]}`;
    res.setHeader('content-type', 'application/json');
    if (req.method === 'GET') {
      res.end(JSON.stringify({ name: 'echo', url: `${origin}${endpoint}`, version: '1', skills: [{ id: 'create_media_buy', name: 'create_media_buy' }] }));
      return;
    }
    calls.push(body);
    const message = `invalid params in ${body} (sent with authorization: ${req.headers.authorization ?? 'none'})`;
    if (endpoint === '/busy') {
      res.statusCode = 503;
      res.end(JSON.stringify({ adcp_error: { code: 'SERVICE_UNAVAILABLE', recovery: 'transient', retry_after: 1, message } }));
      return;
    }
    // Not JSON-RPC: answer with a null id.
    const id = peekJsonRpc(body)?.id ?? null;
    res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32602, message } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: `${origin}/a2a`,
    busyUrl: `${origin}/busy`,
    calls,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
