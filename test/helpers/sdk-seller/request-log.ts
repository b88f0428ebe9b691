/**
 * Every tool call the seller received, with the verdict of the schema
 * validation it went through, read from the seller's own answer: a request the
 * framework refused comes back as `adcp_error.code: "VALIDATION_ERROR"` with
 * `details.side: "request"` (the task tools, which the framework does not
 * validate, answer the same way when ours refuses them, see tasks-tools.ts).
 * Reading the answer rather than re-validating means the log says what the
 * seller actually did, not what we think it should have done.
 */
import type { SchemaIssue } from './schema.js';

export interface ReceivedCall {
  at: number;
  tool: string;
  args: Record<string, unknown>;
  /** The request passed schema validation (false: refused with VALIDATION_ERROR before any handler ran). */
  valid: boolean;
  /** The complaints when it did not. */
  issues: SchemaIssue[];
  /** The AdCP error code of the answer, if it was an error. */
  errorCode?: string;
  errorMessage?: string;
  /** The seller's own reply failed the response schema (the framework said so): a bug of this seller. */
  replyInvalid?: boolean;
  /** The answer was the idempotency store's replay of an earlier one (same key, same canonical payload). */
  replayed?: boolean;
}

export class RequestLog {
  private readonly calls: ReceivedCall[] = [];

  add(call: ReceivedCall): void {
    this.calls.push(call);
  }

  /** Every call, or those received at or after `since` (epoch ms). */
  all(since = 0): ReceivedCall[] {
    return this.calls.filter((c) => c.at >= since);
  }

  of(tool: string): ReceivedCall[] {
    return this.calls.filter((c) => c.tool === tool);
  }

  /** The calls (received at or after `since`, epoch ms) refused for being off the schema, as short lines a failing assertion can print. */
  invalid(since = 0): string[] {
    return this.calls.filter((c) => !c.valid && c.at >= since).map((c) => `${c.tool}: ${c.errorMessage ?? ''} [${c.issues.map((i) => `${i.pointer} ${i.message}`).join('; ')}]`);
  }

  /** Replies of ours the framework refused: must stay empty, or the seller is wrong, not the buyer. */
  invalidReplies(): string[] {
    return this.calls.filter((c) => c.replyInvalid).map((c) => `${c.tool}: ${c.errorMessage ?? ''}`);
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `tools/call` requests of a JSON-RPC body (one message or a batch), by id. */
export function toolCallsOf(body: unknown): Map<string, { tool: string; args: Json }> {
  const calls = new Map<string, { tool: string; args: Json }>();
  for (const m of Array.isArray(body) ? body : [body]) {
    if (!isObject(m) || m.method !== 'tools/call' || !isObject(m.params) || typeof m.params.name !== 'string') continue;
    calls.set(JSON.stringify(m.id), { tool: m.params.name, args: isObject(m.params.arguments) ? m.params.arguments : {} });
  }
  return calls;
}

/** What the seller answered one call: its verdict on the request, read from the reply. */
export function verdictOf(reply: unknown): Pick<ReceivedCall, 'valid' | 'issues' | 'errorCode' | 'errorMessage' | 'replyInvalid' | 'replayed'> {
  const result = isObject(reply) && isObject(reply.result) ? reply.result : undefined;
  const content = result && isObject(result.structuredContent) ? result.structuredContent : undefined;
  const error = content && isObject(content.adcp_error) ? content.adcp_error : undefined;
  if (!error) {
    // A JSON-RPC error (unknown tool, malformed call) never reached a handler or a validator.
    if (isObject(reply) && isObject(reply.error)) return { valid: false, issues: [], errorCode: 'JSONRPC_ERROR', errorMessage: String(reply.error.message ?? '') };
    return { valid: true, issues: [], ...(content?.replayed === true ? { replayed: true } : {}) };
  }
  const code = String(error.code ?? '');
  const message = String(error.message ?? '');
  const details = isObject(error.details) ? error.details : {};
  const issues = (Array.isArray(error.issues) ? error.issues : []).filter(isObject).map((i) => ({ pointer: String(i.pointer ?? ''), message: String(i.message ?? ''), keyword: String(i.keyword ?? '') }));
  if (code === 'VALIDATION_ERROR' && details.side === 'request') return { valid: false, issues, errorCode: code, errorMessage: message };
  if (code === 'VALIDATION_ERROR' && details.side === 'response') return { valid: true, issues: [], errorCode: code, errorMessage: message, replyInvalid: true };
  return { valid: true, issues: [], errorCode: code, errorMessage: message };
}
