/**
 * The CLI's HTTP client for a running orchestrator: where it is and which key to
 * use, JSON calls that turn the API's `{"error": {code, message}}` into an
 * ApiError (printed as `error: <code>: <message>`), and the options every API
 * command shares (`--url`, `--api-key`, `--json`).
 */
import type { Command } from 'commander';
import { ApiError, UnreachableError, UsageError } from './cli-errors.js';

export { ApiError, UnreachableError };

export interface ApiTarget {
  url: string;
  apiKey: string;
}

export function apiTarget(opts: { url?: string; apiKey?: string }): ApiTarget {
  const url = (opts.url ?? process.env.ADCP_ORCH_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}`).replace(/\/+$/, '');
  const apiKey = opts.apiKey ?? process.env.ADCP_ORCH_API_KEY;
  if (!apiKey) throw new UsageError('an API key is needed: --api-key or ADCP_ORCH_API_KEY');
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url must be an absolute URL (got '${url}')`);
  }
  return { url, apiKey };
}

export const authHeaders = (target: ApiTarget): Record<string, string> => ({ authorization: `Bearer ${target.apiKey}` });

export async function callApi<T = unknown>(target: ApiTarget, method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.url}${path}`, {
      method,
      headers: { ...authHeaders(target), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new UnreachableError(target.url, err);
  }
  const text = await res.text();
  if (!res.ok) throw apiErrorOf(res.status, text);
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(res.status, 'invalid_response', `the server answered ${res.status} with a body that is not JSON`);
  }
}

/** The API's error body when there is one; otherwise the status and the start of whatever came back. */
export function apiErrorOf(status: number, text: string): ApiError {
  let parsed: { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const e = parsed?.error;
  if (e && typeof e.code === 'string') return new ApiError(status, e.code, typeof e.message === 'string' ? e.message : '', e.details);
  return new ApiError(status, `http_${status}`, text.trim().slice(0, 200) || `the server answered ${status}`);
}

export interface ApiCommandOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
}

export const apiOptions = (cmd: Command) =>
  cmd
    .option('--url <url>', 'orchestrator base URL (default ADCP_ORCH_URL or http://127.0.0.1:$PORT)')
    .option('--api-key <key>', 'API key (default ADCP_ORCH_API_KEY)')
    .option('--json', 'print JSON instead of lines');
