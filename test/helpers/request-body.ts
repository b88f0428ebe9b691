/**
 * Reading what a peer sent to one of the tests' loopback servers (mock agents,
 * proxies, webhook receivers): the whole body of a request, or of a response a
 * proxy reads back, and a lenient look at a JSON-RPC request in it.
 */
import type { IncomingMessage } from 'node:http';

/** The whole body. Rejects if the peer hangs up before its end. */
export async function readBody(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The whole body as UTF-8 text. Rejects if the peer hangs up before its end. */
export async function readBodyText(stream: IncomingMessage): Promise<string> {
  return (await readBody(stream)).toString('utf8');
}

/**
 * Calls `handle` with the body as UTF-8 text once all of it is in. A request
 * whose client hangs up before that is dropped unanswered: there is no one to
 * answer, and a receiver must not fail the test run for it.
 */
export function whenBodyRead(req: IncomingMessage, handle: (body: string) => void): void {
  readBodyText(req).then(handle, () => undefined);
}

export interface JsonRpcRequest {
  jsonrpc?: string;
  /** Absent on a notification. */
  id?: unknown;
  method?: string;
  params?: any;
}

/**
 * The JSON-RPC request in a body, or undefined when the body is not a JSON
 * object: for servers that only peek at a request and pass anything else on.
 */
export function peekJsonRpc(body: string | Buffer): JsonRpcRequest | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as JsonRpcRequest) : undefined;
  } catch {
    return undefined;
  }
}
