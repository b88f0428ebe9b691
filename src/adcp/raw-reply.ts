/**
 * From a transport's raw reply to our shapes: a TaskReply for a task call, or
 * the bare payload of a poll/list call (whose own failure is not the task's).
 */
import { classifyPayload } from './classify.js';
import { extractA2aReply } from './extract-a2a.js';
import { payloadError, toAdcpError, type WireAdcpError } from './extract-error.js';
import { mcpError, mcpPayload, mcpText, type McpToolResult } from './extract-mcp.js';
import type { JsonObject } from './json.js';
import { AdcpTransportError, type TaskReply } from './types.js';

export type RawReply = { protocol: 'mcp'; result: McpToolResult } | { protocol: 'a2a'; result: unknown };

function protocolError(message: string, wire?: WireAdcpError): AdcpTransportError {
  return new AdcpTransportError(message, 'protocol', undefined, wire ? toAdcpError(wire) : undefined);
}

/** The reply of an AdCP task call, classified from the raw payload. */
export function taskReplyFromRaw(raw: RawReply): TaskReply {
  if (raw.protocol === 'mcp') {
    const { result } = raw;
    const failed = result.isError === true;
    const payload = mcpPayload(result);
    const text = mcpText(result);
    // A success with only prose is no AdCP reply: nothing to classify, so the send stays ambiguous.
    if (!payload && !failed) throw protocolError('MCP reply carries no JSON payload');
    const transportError = mcpError(result);
    return classifyPayload(payload ?? {}, {
      ...(failed ? { transportStatus: 'failed' as const } : {}),
      ...(transportError ? { transportError } : {}),
      ...(text ? { text } : {}),
    });
  }
  const ext = extractA2aReply(raw.result);
  if (ext.wrapperDetected) throw protocolError('A2A DataPart is a {response: ...} wrapper, not an AdCP payload');
  if (!ext.data && !ext.state) throw protocolError('A2A reply carries neither a task state nor a DataPart');
  return classifyPayload(ext.data ?? {}, {
    ...(ext.state && ext.state !== 'completed' ? { transportStatus: ext.state } : {}),
    ...(ext.adcpTaskId ? { taskId: ext.adcpTaskId } : {}),
    ...(ext.a2aContextId ? { contextId: ext.a2aContextId } : {}),
    ...(ext.text ? { text: ext.text } : {}),
    a2a: {
      ...(ext.a2aTaskId ? { taskId: ext.a2aTaskId } : {}),
      ...(ext.a2aContextId ? { contextId: ext.a2aContextId } : {}),
      // Whether the A2A task itself is still open (input-required) or closed (completed).
      ...(ext.state ? { state: ext.state } : {}),
    },
  });
}

/**
 * The payload of a protocol call (`get_task_status`, `tasks/list`, ...), or an
 * AdcpTransportError when that call itself failed. A poll that failed says
 * nothing about the task, so it must never come back as a `failed` TaskReply.
 */
export function protocolPayload(raw: RawReply, tool: string): JsonObject {
  let payload: JsonObject | undefined;
  if (raw.protocol === 'mcp') {
    payload = mcpPayload(raw.result);
    if (raw.result.isError === true) {
      const wire = mcpError(raw.result) ?? payloadError(payload);
      throw protocolError(`${tool} failed${wire ? `: ${wire.code}` : ''}`, wire);
    }
  } else {
    const ext = extractA2aReply(raw.result);
    payload = ext.data ?? undefined;
    if (ext.state === 'failed' || ext.state === 'rejected' || ext.state === 'canceled') {
      const wire = payloadError(payload);
      throw protocolError(`${tool} failed${wire ? `: ${wire.code}` : ''}`, wire);
    }
  }
  if (!payload) throw protocolError(`${tool} reply carries no JSON payload`);
  return payload;
}
