/**
 * `@target-uri` and `@authority` as the AdCP RFC 9421 profile canonicalizes them
 * (security.mdx, "AdCP RFC 9421 profile"; reference/url-canonicalization): scheme and
 * host lowercased, IDN to A-labels, one DNS root dot stripped, userinfo and fragment
 * dropped, default port stripped, dot segments removed, percent-encoding normalized
 * (hex uppercased, unreserved characters decoded), the query kept byte for byte.
 *
 * Why not the SDK's `canonicalTargetUri`: it goes through WHATWG URL parsing, which
 * reads `https:///p` as host `p`, keeps `example.com.`, drops an empty `?`, and
 * refuses userinfo and U-labels; 11 of the 37 cases of the spec's canonicalization.json
 * come out wrong. The signer and the verifier must produce the same bytes, so this
 * follows the spec's vectors (test/unit/target-uri.test.ts runs all of them).
 */
import { domainToASCII } from 'node:url';

export class TargetUriError extends Error {
  readonly code = 'request_target_uri_malformed';
}

export interface CanonicalTarget {
  targetUri: string;
  authority: string;
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443' };
const UNRESERVED = /[A-Za-z0-9\-._~]/;

export function canonicalTarget(raw: string): CanonicalTarget {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/s.exec(raw);
  if (!m) throw new TargetUriError(`not an absolute URL with an authority: ${raw}`);
  const scheme = m[1]!.toLowerCase();
  const { host, port } = splitAuthority(m[2]!);
  const keptPort = port === '' || port === DEFAULT_PORTS[scheme] ? '' : `:${port}`;
  const authority = `${host}${keptPort}`;
  let path = normalizePercent(removeDotSegments(m[3]!));
  if (path === '') path = '/';
  const query = m[4] ?? '';
  return { targetUri: `${scheme}://${authority}${path}${query}`, authority };
}

function splitAuthority(authority: string): { host: string; port: string } {
  // Userinfo is never part of the signed target (step 3); a host must remain.
  const at = authority.lastIndexOf('@');
  const hostPort = at >= 0 ? authority.slice(at + 1) : authority;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) throw new TargetUriError('IPv6 host without its closing bracket');
    const inner = hostPort.slice(1, close);
    if (inner.includes('%')) throw new TargetUriError('IPv6 zone identifiers are node-local and never signed');
    if (!/^[0-9A-Fa-f:.]+$/.test(inner) || !inner.includes(':')) throw new TargetUriError(`not an IPv6 address: [${inner}]`);
    return { host: `[${inner.toLowerCase()}]`, port: portOf(hostPort.slice(close + 1)) };
  }
  const colon = hostPort.indexOf(':');
  if (colon >= 0 && hostPort.indexOf(':', colon + 1) >= 0) throw new TargetUriError('an IPv6 address must be in brackets');
  const name = colon >= 0 ? hostPort.slice(0, colon) : hostPort;
  return { host: dnsHost(name), port: colon >= 0 ? portOf(hostPort.slice(colon)) : '' };
}

function portOf(rest: string): string {
  if (rest === '' || rest === ':') return '';
  const m = /^:(\d+)$/.exec(rest);
  if (!m) throw new TargetUriError(`bad port: ${rest}`);
  return String(Number(m[1]));
}

function dnsHost(name: string): string {
  if (name === '') throw new TargetUriError('the authority has no host');
  // UTS-46 (non-transitional, as WHATWG URL does it) maps case and turns U-labels into A-labels.
  const ascii = /^[\x21-\x7e]*$/.test(name) ? name.toLowerCase() : domainToASCII(name);
  if (!ascii) throw new TargetUriError(`host is not a valid domain name: ${name}`);
  const host = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  if (host === '' || host.split('.').some((label) => label === '')) throw new TargetUriError(`host has an empty DNS label: ${name}`);
  return host;
}

/** RFC 3986 §5.2.4, on the path as written (percent-encoded dots are not segments here). */
function removeDotSegments(path: string): string {
  let input = path;
  const out: string[] = [];
  while (input.length > 0) {
    if (input.startsWith('../')) input = input.slice(3);
    else if (input.startsWith('./')) input = input.slice(2);
    else if (input.startsWith('/./')) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.startsWith('/../')) {
      input = input.slice(3);
      out.pop();
    } else if (input === '/..') {
      input = '/';
      out.pop();
    } else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', input.startsWith('/') ? 1 : 0);
      const segment = next < 0 ? input : input.slice(0, next);
      out.push(segment);
      input = next < 0 ? '' : input.slice(next);
    }
  }
  return out.join('');
}

/** `%xx` hex uppercased, unreserved ones decoded; bytes that must be encoded are (as an HTTP client sends them). */
function normalizePercent(path: string): string {
  const chars = Array.from(path); // code points, so a character outside the BMP is encoded whole
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const hex = `${chars[i + 1] ?? ''}${chars[i + 2] ?? ''}`;
    if (c === '%' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      const byte = String.fromCharCode(parseInt(hex, 16));
      out += UNRESERVED.test(byte) ? byte : `%${hex.toUpperCase()}`;
      i += 2;
    } else if (/[A-Za-z0-9\-._~!$&'()*+,;=:@/]/.test(c)) {
      out += c;
    } else {
      for (const b of Buffer.from(c, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}
