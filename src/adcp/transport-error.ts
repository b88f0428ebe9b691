/**
 * Mapping whatever a transport threw to AdcpTransportError: the single signal
 * that no AdCP reply was obtained, so the send is ambiguous (AdCP spec, polling, timeouts, retries, reconciliation).
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { jsonRpcError, toAdcpError } from './extract-error.js';
import { httpFailureError, type HttpFailure } from './http-failure.js';
import { ReplyTooLargeError } from './reply-limit.js';
import { AdcpTransportError } from './types.js';

/** A JSON-RPC error reply (before dispatch: -32029 rate limit, -32028 auth, -32027 unavailable, ...). */
export class JsonRpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'JsonRpcFailure';
  }
}

/** Thrown by our own fetch paths for a non-2xx reply. */
export class HttpStatusFailure extends Error {
  constructor(readonly failure: HttpFailure) {
    super(`HTTP ${failure.status}`);
    this.name = 'HttpStatusFailure';
  }
}

export interface FailureContext {
  /** Our deadline fired (the AbortSignal was aborted by the timer). */
  timedOut: boolean;
  timeoutMs?: number;
  /** The HTTP error response seen during the call, if any. */
  http?: HttpFailure;
}

function isNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const cause = (err as { cause?: { code?: unknown } }).cause;
  return (
    (err.name === 'TypeError' && /fetch failed|network/i.test(err.message)) ||
    typeof cause?.code === 'string' ||
    typeof (err as { code?: unknown }).code === 'string' // ECONNREFUSED and friends
  );
}

function rpcError(code: number, message: string, data: unknown): AdcpTransportError {
  const wire = jsonRpcError({ code, message, data });
  return new AdcpTransportError(`JSON-RPC error ${code}: ${message}`, 'rpc', undefined, wire ? toAdcpError(wire) : undefined, code);
}

export function toTransportError(err: unknown, ctx: FailureContext): AdcpTransportError {
  if (err instanceof AdcpTransportError) return err;
  if (err instanceof ReplyTooLargeError) return new AdcpTransportError(err.message, 'reply_too_large');
  if (ctx.timedOut || (err instanceof McpError && err.code === ErrorCode.RequestTimeout)) {
    return new AdcpTransportError(`no reply within ${ctx.timeoutMs ?? '?'} ms`, 'timeout');
  }
  const http = err instanceof HttpStatusFailure ? err.failure : ctx.http;
  if (http || (err instanceof StreamableHTTPError && (err.code ?? 0) > 0)) {
    const failure: HttpFailure = http ?? { status: (err as StreamableHTTPError).code ?? 0 };
    return new AdcpTransportError(`HTTP ${failure.status} from agent`, 'http', failure.status, httpFailureError(failure));
  }
  // The MCP client reports its own transport closing as JSON-RPC -32000; that is no answer
  // from the agent, so the send is ambiguous (a network failure), never a refusal.
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
    return new AdcpTransportError(`connection closed before a reply: ${err.message}`, 'network');
  }
  if (err instanceof JsonRpcFailure) return rpcError(err.code, err.message, err.data);
  if (err instanceof McpError) return rpcError(err.code, err.message, err.data);
  const message = err instanceof Error ? err.message : String(err);
  return new AdcpTransportError(message, isNetworkError(err) ? 'network' : 'protocol');
}
