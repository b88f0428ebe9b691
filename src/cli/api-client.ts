/** A small HTTP client for the CLI commands that talk to a running orchestrator. */
export interface ApiTarget {
  url: string;
  apiKey: string;
}

export function apiTarget(opts: { url?: string; apiKey?: string }): ApiTarget {
  const url = (opts.url ?? process.env.ADCP_ORCH_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}`).replace(/\/+$/, '');
  const apiKey = opts.apiKey ?? process.env.ADCP_ORCH_API_KEY;
  if (!apiKey) throw new Error('an API key is needed: --api-key or ADCP_ORCH_API_KEY');
  return { url, apiKey };
}

export async function callApi<T = unknown>(target: ApiTarget, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${target.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${target.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const e = parsed?.error;
    throw new Error(`${res.status} ${e?.code ?? ''}: ${e?.message ?? text}`.trim());
  }
  return parsed as T;
}

export const apiOptions = (cmd: import('commander').Command) =>
  cmd.option('--url <url>', 'orchestrator base URL (default ADCP_ORCH_URL or http://127.0.0.1:$PORT)').option('--api-key <key>', 'API key (default ADCP_ORCH_API_KEY)');
