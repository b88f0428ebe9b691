/**
 * Every vector of transport-error-mapping.json: the wire error each transport
 * path yields (compared verbatim with `expected_error`), and the action our
 * normalized error leads to (compared with `expected_action`).
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { a2aError } from '../../../src/adcp/extract-a2a.js';
import { jsonRpcError, toAdcpError, type WireAdcpError } from '../../../src/adcp/extract-error.js';
import { mcpError, type McpToolResult } from '../../../src/adcp/extract-mcp.js';
import { taskReplyFromRaw } from '../../../src/adcp/raw-reply.js';
import { toTransportError } from '../../../src/adcp/transport-error.js';
import type { AdcpError } from '../../../src/adcp/types.js';
import { loadVectors } from './vectors.js';

interface ErrorVector {
  id: string;
  description: string;
  transport: 'mcp' | 'a2a';
  path: 'structuredContent' | 'text_fallback' | 'jsonrpc_error' | 'artifact' | 'status_message';
  response: Record<string, unknown>;
  expected_error: Record<string, unknown> | null;
  expected_action: 'retry' | 'surface_to_caller' | 'escalate_to_human' | 'generic_error';
}

const vectors = loadVectors<ErrorVector>('transport-error-mapping.json');
const cases = vectors.map((v) => [v.id, v] as const);

/** The extraction function the client uses for this transport path. */
function extract(v: ErrorVector): WireAdcpError | undefined {
  if (v.path === 'jsonrpc_error') return jsonRpcError(v.response.error);
  if (v.transport === 'a2a') return a2aError(v.response);
  return mcpError(v.response as McpToolResult);
}

/**
 * Where we act otherwise than a vector says. `mcp-missing-recovery-unknown-code` expects
 * `escalate_to_human` (terminal), as transport-errors.mdx does; error-handling.mdx's normative
 * "Forward-compatible decoding" (3.1) and the manifest's `default_unknown_recovery` make an
 * unknown code without `recovery` transient, bounded by the retry budget (src/adcp/recovery.ts;
 * the engine stalls it for a person once the budget is spent).
 */
const ACTION_OVERRIDES: Readonly<Record<string, ErrorVector['expected_action']>> = { 'mcp-missing-recovery-unknown-code': 'retry' };

/** How the vectors name what a caller does with an error. */
function action(error: AdcpError | undefined): ErrorVector['expected_action'] {
  if (!error) return 'generic_error';
  return { transient: 'retry', correctable: 'surface_to_caller', terminal: 'escalate_to_human' }[error.recovery!] as ErrorVector['expected_action'];
}

describe('transport-error-mapping.json', () => {
  it.each(cases)('%s: extracts the expected wire error', (_id, v) => {
    expect(extract(v) ?? null).toEqual(v.expected_error);
  });

  it.each(cases)('%s: leads to the expected action', (_id, v) => {
    const wire = extract(v);
    const error = wire ? toAdcpError(wire) : undefined;
    expect(action(error)).toBe(ACTION_OVERRIDES[v.id] ?? v.expected_action);
    const retryAfter = v.expected_error?.retry_after;
    if (typeof retryAfter === 'number') expect(error?.retryAfterSeconds).toBe(Math.min(3600, Math.max(1, Math.ceil(retryAfter))));
  });

  it.each(cases)('%s: the client surfaces the same error', (_id, v) => {
    const expected = v.expected_error ? toAdcpError(v.expected_error as unknown as WireAdcpError) : undefined;
    if (v.path === 'jsonrpc_error') {
      // A JSON-RPC error is no AdCP reply: callTask throws AdcpTransportError(kind rpc).
      const rpc = v.response.error as { code: number; message: string; data?: unknown };
      const thrown = toTransportError(new McpError(rpc.code, rpc.message, rpc.data), { timedOut: false });
      expect(thrown.kind).toBe('rpc');
      expect(thrown.adcpError).toEqual(expected);
      return;
    }
    const reply = taskReplyFromRaw({ protocol: v.transport, result: v.response } as never);
    if (v.id === 'mcp-structured-content-no-iserror' || v.id === 'mcp-success-with-adcp-error-json') {
      // The vector forbids the *error mapper* from reading an adcp_error without
      // isError (it could be data). The reply classifier still will not call a
      // payload whose only content is adcp_error a success: status failed.
      expect(reply.status).toBe('failed');
      return;
    }
    expect(reply.status).toBe('failed');
    expect(reply.error).toEqual(expected);
  });
});
