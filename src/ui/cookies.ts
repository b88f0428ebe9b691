/** Reading the Cookie header and writing Set-Cookie values, for the few cookies the dashboard sets. */
import type { FastifyRequest } from 'fastify';

export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(value);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface CookieOptions {
  path: string;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  secure: boolean;
}

/** HttpOnly (no script reads it) and SameSite=Strict (no other site's page sends it), always. */
export function cookie(name: string, value: string, opts: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${opts.path}`, `Max-Age=${opts.maxAge}`, 'HttpOnly', 'SameSite=Strict'];
  if (opts.secure) parts.push('Secure');
  return parts.join('; ');
}

/**
 * Whether the browser reached us over HTTPS: directly, through a proxy that says so,
 * or because the service is published at an https:// address. Only used to add
 * `Secure`, so a wrong "yes" costs nothing worse than a cookie kept off plain HTTP.
 */
export function cameOverHttps(req: FastifyRequest, publicUrl: string | undefined): boolean {
  if (req.protocol === 'https') return true;
  const forwarded = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  if (first === 'https') return true;
  return publicUrl?.startsWith('https://') ?? false;
}
