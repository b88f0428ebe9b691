/**
 * `adcp-orchestrator mcp --url URL`: a stdio bridge for local MCP clients (desktop
 * apps, IDEs) to a running orchestrator's /mcp, authenticated with ADCP_ORCH_API_KEY.
 * A message pump, not a second server: every JSON-RPC message goes through unchanged
 * between the SDK's StdioServerTransport (our standard input and output) and its
 * StreamableHTTPClientTransport (the orchestrator), so tools, tasks and resource
 * notifications are exactly the server's.
 *
 * If the server forgets the session (it restarted, or the session idled out), the
 * bridge opens a new one with the client's own `initialize` and sends the message
 * again: operations and tasks are durable, so the client carries on where it was.
 * Standard output carries only MCP messages; anything to say goes to standard error.
 */
import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { apiTarget, type ApiTarget } from '../api-client.js';

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('stdio bridge to a running orchestrator’s MCP server, for local MCP clients (key from ADCP_ORCH_API_KEY)')
    .option('--url <url>', 'orchestrator base URL (default ADCP_ORCH_URL or http://127.0.0.1:$PORT)')
    .action(async (o: { url?: string }) => {
      await runBridge(apiTarget({ url: o.url }));
    });
}

async function runBridge(target: ApiTarget): Promise<void> {
  const local = new StdioServerTransport();
  let remote = connectRemote(target, local);
  let initialize: JSONRPCRequest | undefined;
  /** While a new session is opened, the initialize answer is ours, not the client's. */
  let reopening: { id: JSONRPCRequest['id']; done: (version: string) => void } | undefined;
  // One message at a time, in order: a message sent while a session is reopened waits for it.
  let queue = Promise.resolve();

  const reopen = async () => {
    await remote.close().catch(() => undefined);
    remote = connectRemote(target, local, (message) => {
      if (!reopening || !('result' in message) || message.id !== reopening.id) return false;
      reopening.done(String((message.result as { protocolVersion?: unknown }).protocolVersion ?? ''));
      return true;
    });
    const answered = new Promise<string>((done) => (reopening = { id: initialize!.id, done }));
    await remote.send(initialize!);
    const version = await answered;
    reopening = undefined;
    if (version) remote.setProtocolVersion(version);
    await remote.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    process.stderr.write('adcp-orchestrator mcp: the server had lost the session; opened a new one\n');
  };

  const forward = async (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && isInitializeRequest(message)) initialize = message;
    try {
      await remote.send(message);
    } catch (err) {
      if (sessionLost(err) && initialize && message !== initialize) {
        await reopen();
        await remote.send(message);
        return;
      }
      throw err;
    }
  };

  local.onmessage = (message) => {
    queue = queue
      .then(() => forward(message))
      .catch(async (err: unknown) => {
        process.stderr.write(`adcp-orchestrator mcp: ${describe(err)}\n`);
        // A request must be answered, or the client waits for ever.
        if (isJSONRPCRequest(message)) await local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: describe(err) } }).catch(() => undefined);
      });
  };
  // The client went away (closed our standard input, or stopped us): end the server's session too.
  local.onclose = () => {
    void queue.then(async () => {
      await remote.terminateSession().catch(() => undefined);
      await remote.close().catch(() => undefined);
      process.exit(0);
    });
  };
  process.stdin.once('end', () => void local.close());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void local.close());
  await local.start();
}

/** The HTTP side; its messages go to the client unless `ours` takes them. */
function connectRemote(target: ApiTarget, local: StdioServerTransport, ours: (m: JSONRPCMessage) => boolean = () => false): StreamableHTTPClientTransport {
  const remote = new StreamableHTTPClientTransport(new URL('/mcp', target.url), { requestInit: { headers: { authorization: `Bearer ${target.apiKey}` } } });
  remote.onmessage = (message) => {
    if (ours(message)) return;
    // The client negotiated a protocol version: later requests must carry it, as the SDK's own client does.
    if ('result' in message && typeof (message.result as { protocolVersion?: unknown }).protocolVersion === 'string') {
      remote.setProtocolVersion((message.result as { protocolVersion: string }).protocolVersion);
    }
    void local.send(message).catch(() => undefined);
  };
  remote.onerror = (err) => process.stderr.write(`adcp-orchestrator mcp: ${describe(err)}\n`);
  void remote.start();
  return remote;
}

function sessionLost(err: unknown): boolean {
  return err instanceof StreamableHTTPError && err.code === 404;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
