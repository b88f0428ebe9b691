/**
 * Pulling the AdCP payload and error out of an MCP `CallToolResult`.
 *
 * The payload lives in `structuredContent`; servers without structured output
 * put the same JSON in a text item, so we fall back to the first text item that
 * parses as a JSON object (vectors in mcp-response-extraction.json).
 */
import { isJsonObject, parseJsonObject, type JsonObject } from './json.js';
import { payloadError, readWireError, type WireAdcpError } from './extract-error.js';

/** The slice of an MCP CallToolResult we read. */
export interface McpToolResult {
  isError?: boolean;
  structuredContent?: unknown;
  content?: unknown;
}

function textItems(result: McpToolResult): string[] {
  if (!Array.isArray(result.content)) return [];
  const texts: string[] = [];
  for (const item of result.content) {
    if (isJsonObject(item) && item.type === 'text' && typeof item.text === 'string') texts.push(item.text);
  }
  return texts;
}

/**
 * The JSON object the tool returned, success or error alike: `structuredContent`
 * when it is an object (it wins over text), else the first text item that is a
 * JSON object. Undefined for a plain-text reply.
 */
export function mcpPayload(result: McpToolResult): JsonObject | undefined {
  if (isJsonObject(result.structuredContent)) return result.structuredContent;
  for (const text of textItems(result)) {
    const parsed = parseJsonObject(text);
    if (parsed) return parsed;
  }
  return undefined;
}

/** All text items joined: a human-readable message when the payload has none. */
export function mcpText(result: McpToolResult): string | undefined {
  const text = textItems(result).join('\n').trim();
  return text === '' ? undefined : text;
}

function isErrorOnly(payload: JsonObject): boolean {
  const keys = Object.keys(payload);
  return keys.length === 1 && keys[0] === 'adcp_error';
}

/**
 * Success data per mcp-response-extraction.json: null for `isError`, for a reply
 * that is only an `adcp_error` (an error that forgot `isError`), and for text
 * that is not a JSON object.
 */
export function extractMcpData(result: McpToolResult): JsonObject | null {
  if (result.isError === true) return null;
  const payload = mcpPayload(result);
  if (!payload || isErrorOnly(payload)) return null;
  return payload;
}

/**
 * The AdCP error of a tool result, per transport-error-mapping.json: only when
 * `isError` is set (an `adcp_error` in a success reply could be data), from
 * `structuredContent.adcp_error`, else from a text item's JSON `adcp_error`.
 * Also accepts `errors[]` there (the task-response error arm), which the
 * vectors do not exercise. No guessing from prose.
 */
export function mcpError(result: McpToolResult): WireAdcpError | undefined {
  if (result.isError !== true) return undefined;
  if (isJsonObject(result.structuredContent)) {
    const err = payloadError(result.structuredContent);
    if (err) return err;
  }
  for (const text of textItems(result)) {
    const parsed = parseJsonObject(text);
    const err = parsed ? readWireError(parsed.adcp_error) ?? payloadError(parsed) : undefined;
    if (err) return err;
  }
  return undefined;
}
