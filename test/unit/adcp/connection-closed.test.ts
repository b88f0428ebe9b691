/** A connection the MCP client saw close is no answer: the send is ambiguous and must be retried, not failed. */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { toTransportError } from '../../../src/adcp/transport-error.js';

describe('MCP connection closed', () => {
  it('maps to a network failure (ambiguous send), not a JSON-RPC refusal', () => {
    const err = toTransportError(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), { timedOut: false });
    expect(err.kind).toBe('network');
    expect(err.adcpError).toBeUndefined();
  });

  it('still maps a server JSON-RPC error to rpc', () => {
    expect(toTransportError(new McpError(ErrorCode.InvalidParams, 'bad'), { timedOut: false }).kind).toBe('rpc');
  });
});
