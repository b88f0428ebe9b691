/**
 * The official MCP client (Client + StreamableHTTPClientTransport) connected to an
 * orchestrator's /mcp with an API key, as an AI agent would connect.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export interface McpTestClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** tools/call; the result as the client got it. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export async function connectMcp(baseUrl: string, apiKey: string | undefined, name = 'test-agent'): Promise<McpTestClient> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
    requestInit: { headers: apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` } },
  });
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return {
    client,
    transport,
    call: async (tool, args = {}) => (await client.callTool({ name: tool, arguments: args })) as CallToolResult,
    async close() {
      // Ends the session on the server too (DELETE), as a well-behaved client does.
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/** The text a model reads of a result. */
export const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** A tool result's error as the server put it (`_meta`), e.g. {code: 'forbidden', message}. */
export const errorOf = (result: CallToolResult) => (result._meta as Record<string, { code: string; message: string }> | undefined)?.['adcp-orchestrator/error'];
