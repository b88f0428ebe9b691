/**
 * Tool results: `structuredContent` is the JSON the API answers, beside one paragraph
 * of text a model reads; an error is an `isError` result with our error code and
 * message (the API's `{"error": {code, message}}`, also under `_meta` for programs).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { presentOperation } from '../domain/operation-json.js';
import { isTerminal, type OperationStatus } from '../domain/status.js';
import type { OperationRow } from '../store/index.js';
import type { DashboardLinks } from './links.js';
import { operationSummary } from './operation-summary.js';

export const ERROR_META_KEY = 'adcp-orchestrator/error';

export function jsonResult(json: unknown, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: json as Record<string, unknown> };
}

export function errorResult(code: string, message: string, details?: unknown): CallToolResult {
  const error = details === undefined ? { code, message } : { code, message, details };
  return { content: [{ type: 'text', text: `Error ${code}: ${message}` }], isError: true, _meta: { [ERROR_META_KEY]: error } };
}

/**
 * An operation as a tool's (or a task's) result. One that ended failed, rejected or
 * canceled is an error result too, so a client following a task sees it failed, with
 * the operation beside the text. `note`: a sentence the tool adds about what the
 * operation works on.
 */
export function operationResult(row: OperationRow, links: DashboardLinks, note?: string): CallToolResult {
  const json = presentOperation(row);
  const result = jsonResult(json, note ? `${operationSummary(json, links)} ${note}` : operationSummary(json, links));
  const ended = isTerminal(row.status as OperationStatus) && row.status !== 'completed';
  return ended ? { ...result, isError: true } : result;
}
