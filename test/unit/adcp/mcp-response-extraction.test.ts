/**
 * Every vector of mcp-response-extraction.json, through the functions the client
 * uses: extractMcpData (the vector's own contract) and taskReplyFromRaw (what
 * callTask returns for that reply).
 */
import { describe, expect, it } from 'vitest';
import { extractMcpData, type McpToolResult } from '../../../src/adcp/extract-mcp.js';
import { taskReplyFromRaw } from '../../../src/adcp/raw-reply.js';
import { isAdcpTaskStatus } from '../../../src/domain/status.js';
import { AdcpTransportError } from '../../../src/adcp/types.js';
import { loadVectors } from './vectors.js';

interface McpVector {
  id: string;
  description: string;
  path: 'structuredContent' | 'text_fallback';
  response: McpToolResult;
  expected_data: Record<string, unknown> | null;
}

const vectors = loadVectors<McpVector>('mcp-response-extraction.json');

describe('mcp-response-extraction.json', () => {
  it.each(vectors.map((v) => [v.id, v] as const))('%s: extracts the expected data', (_id, v) => {
    expect(extractMcpData(v.response)).toEqual(v.expected_data);
  });

  it.each(vectors.map((v) => [v.id, v] as const))('%s: callTask reply agrees', (_id, v) => {
    const raw = { protocol: 'mcp' as const, result: v.response };
    if (v.expected_data !== null) {
      const reply = taskReplyFromRaw(raw);
      expect(reply.data).toEqual(v.expected_data);
      const root = v.expected_data.status;
      expect(reply.status).toBe(isAdcpTaskStatus(root) ? root : 'completed');
      return;
    }
    if (v.response.isError === true) {
      // Error replies are not data, but they are still replies: the task failed.
      expect(taskReplyFromRaw(raw).status).toBe('failed');
    } else if (v.id.includes('adcp-error-only')) {
      // An adcp_error that forgot isError: not success data (the vector), and our
      // classifier reads it as a failed task with that error (AdCP spec, task status).
      const reply = taskReplyFromRaw(raw);
      expect(reply.status).toBe('failed');
      expect(reply.error?.code).toBeTruthy();
    } else {
      // Prose, non-JSON, or a JSON array: no AdCP reply at all, so the send stays ambiguous.
      expect(() => taskReplyFromRaw(raw)).toThrow(AdcpTransportError);
    }
  });

  it('keeps "__proto__" as data and never as a prototype', () => {
    const v = vectors.find((x) => x.id === 'proto-pollution-structured')!;
    const data = extractMcpData(v.response)!;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(data, '__proto__')).toBe(true);
    expect((data as { isAdmin?: unknown }).isAdmin).toBeUndefined();
    expect(({} as { isAdmin?: unknown }).isAdmin).toBeUndefined();
  });
});
