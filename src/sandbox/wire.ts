/**
 * Shapes of what the sandbox puts on the wire: MCP CallToolResults carrying
 * AdCP bodies in `structuredContent` (with the JSON text mirrored in
 * `content` for clients that only read text).
 */
import { adcpError } from '@adcp/sdk/server';

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

export function ok(body: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

export interface ErrorOptions {
  recovery?: 'transient' | 'correctable' | 'terminal';
  field?: string;
  retry_after?: number;
  details?: Record<string, unknown>;
  /** Extra top-level fields (e.g. `status: "failed"`, `context`). */
  extra?: Record<string, unknown>;
}

/**
 * An AdCP error reply. We send it both ways the spec allows: the body's
 * `errors[]` (the 3.0 *Error arm) and `adcp_error` (the MCP envelope the SDK's
 * `adcpError` builds, with its per-code field allowlist applied), with
 * `isError: true`. A buyer reading either finds the same code and recovery.
 */
export function errorResult(code: string, message: string, opts: ErrorOptions = {}): ToolResult {
  const envelope = adcpError(code, {
    message,
    ...(opts.recovery && { recovery: opts.recovery }),
    ...(opts.field && { field: opts.field }),
    ...(opts.retry_after !== undefined && { retry_after: opts.retry_after }),
    ...(opts.details && { details: opts.details }),
  });
  const adcp_error = { ...envelope.structuredContent.adcp_error } as Record<string, unknown>;
  const body = { ...opts.extra, errors: [adcp_error], adcp_error };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
}

/** Deep copy through JSON: replies are cached and must not share objects with later mutations. */
export function cloneResult(r: ToolResult): ToolResult {
  return JSON.parse(JSON.stringify(r)) as ToolResult;
}

/** Rewrites structuredContent and keeps the text mirror in step. */
export function withBody(r: ToolResult, body: Record<string, unknown>): ToolResult {
  return { ...r, structuredContent: body, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
