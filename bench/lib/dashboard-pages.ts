/**
 * Timing dashboard pages as a browser sees them: sign in through the login form (a
 * session cookie, as a person gets), then GET a page with that cookie and read the
 * server's own time from the `Server-Timing` header the dashboard sets (request
 * received → response handed to the socket), beside the round trip on loopback.
 * Used by bench/dashboard.ts and bench/media-buys-page.ts.
 */
import { fmt, log, percentile, type ResultRow } from './common.js';

/** Signs in with `apiKey` through the login form; the `adcp_session=…` cookie to send. */
export async function signIn(url: string, apiKey: string): Promise<string> {
  const login = await fetch(`${url}/login`);
  const loginCookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())![1]!;
  const signedIn = await fetch(`${url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: loginCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, api_key: apiKey }),
  });
  return signedIn.headers.getSetCookie().find((c) => c.startsWith('adcp_session='))!.split(';')[0]!;
}

export interface TimedPage {
  body: string;
  /** Milliseconds, from the page's Server-Timing header. */
  server: number;
  /** Milliseconds, the round trip seen here. */
  wall: number;
}

/**
 * One GET of `path` with the session cookie, timed. Throws unless it answers 200 with a
 * body `check` accepts: a figure of the wrong page must not count.
 */
export async function timedPage(url: string, session: string, path: string, headers: Record<string, string> = {}, check: (body: string) => boolean = () => true): Promise<TimedPage> {
  const started = performance.now();
  const res = await fetch(`${url}${path}`, { headers: { cookie: session, ...headers } });
  const body = await res.text();
  const wall = performance.now() - started;
  if (res.status !== 200 || !check(body)) throw new Error(`${path}: ${res.status}, the page is not what it should be: ${body.slice(0, 300)}`);
  return { body, server: Number(/dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')![1]), wall };
}

/**
 * Logs a page's figures and returns its result rows: server p50 (with `vs`, e.g. a ratio
 * to a baseline, after it) and server p95, held to `targetMs` when given.
 */
export function serverTimeRows(
  name: string,
  s: { server: number[]; wall: number[]; bytes: number; rows?: number },
  targetMs: number | undefined,
  vs = '',
): ResultRow[] {
  const p50 = percentile(s.server, 50);
  const p95 = percentile(s.server, 95);
  const rows = s.rows === undefined ? '' : `${s.rows} rows, `;
  log(`${name}: ${rows}${fmt(s.bytes / 1024, 1)} KiB; server p50 ${p50.toFixed(1)} ms${vs} p95 ${p95.toFixed(1)} ms; round trip p50 ${percentile(s.wall, 50).toFixed(1)} ms`);
  return [
    { figure: `${name}: server p50`, value: `${p50.toFixed(1)} ms${vs}` },
    { figure: `${name}: server p95`, value: `${p95.toFixed(1)} ms`, ...(targetMs !== undefined ? { target: `< ${targetMs} ms`, pass: p95 < targetMs } : {}) },
  ];
}
