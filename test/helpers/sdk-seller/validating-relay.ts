/**
 * A loopback relay in front of another agent (the tests put it before the
 * project's sandbox governance agent): every HTTP request is passed on as is,
 * and every `tools/call` in it is first checked against the AdCP request
 * schema with the SDK's validator and logged. The agent behind it still
 * answers whatever it answers; the log says what a strict agent would have
 * refused (check_governance, report_plan_outcome, sync_plans, …).
 *
 * Register the relay's `url` in place of the agent's; the agent's own identity
 * (the `iss` of its tokens) does not change.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestLog, toolCallsOf } from './request-log.js';
import { checkRequest, nameExtraProperties } from './schema.js';

export interface ValidatingRelay {
  /** The agent URL to register (the target's path on the relay's origin). */
  url: string;
  log: RequestLog;
  close(): Promise<void>;
}

/** Tool names whose schema file is named otherwise (AdCP 3.0's slash names). */
const SCHEMA_NAME: Record<string, string> = { 'tasks/get': 'tasks_get', 'tasks/list': 'tasks_list' };

/** Hop-by-hop and length headers: the relay's own HTTP exchange sets them. */
const NOT_FORWARDED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'content-encoding']);

export async function startValidatingRelay(targetUrl: string): Promise<ValidatingRelay> {
  const target = new URL(targetUrl);
  const log = new RequestLog();
  const server = createServer((req, res) => {
    relay(req)
      .then(({ status, headers, body }) => {
        res.writeHead(status, headers);
        res.end(body);
      })
      .catch((err: unknown) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `relay: ${err instanceof Error ? err.message : String(err)}` }));
      });
  });

  async function relay(req: IncomingMessage): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    if (raw.length > 0) noteCalls(raw.toString('utf8'));
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !NOT_FORWARDED.has(k)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const upstream = await fetch(new URL(req.url ?? '/', target.origin), {
      method: req.method,
      headers,
      ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: raw }),
    });
    const back: Record<string, string> = {};
    upstream.headers.forEach((v, k) => {
      if (!NOT_FORWARDED.has(k)) back[k] = v;
    });
    return { status: upstream.status, headers: back, body: Buffer.from(await upstream.arrayBuffer()) };
  }

  function noteCalls(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    for (const { tool, args } of toolCallsOf(parsed).values()) {
      const schemaTool = SCHEMA_NAME[tool] ?? tool;
      const outcome = checkRequest(schemaTool, args);
      log.add({ at: Date.now(), tool, args, valid: outcome.valid, issues: nameExtraProperties(schemaTool, args, outcome.issues), ...(outcome.valid ? {} : { errorMessage: `${tool} request is off the AdCP schema` }) });
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
