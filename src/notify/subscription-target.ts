/**
 * Where a subscription may send (SSRF guard, Standard Webhooks "Server side
 * request forgery"): only public unicast addresses, unless
 * ADCP_ORCH_ALLOW_PRIVATE_NETWORK lets loopback and private ranges through for
 * sandboxes and tests. Link-local (cloud metadata at 169.254.169.254, fe80::/10)
 * is refused always. The host is resolved and every address must pass, at
 * creation and again at each connection (the delivery's DNS lookup goes
 * through `guardedLookup`, so a name re-pointed at an internal address later is
 * refused then too).
 */
import { lookup as dnsLookup } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export class TargetRefused extends Error {
  constructor(
    readonly code: 'url_not_allowed' | 'url_unresolvable',
    message: string,
  ) {
    super(message);
    this.name = 'TargetRefused';
  }
}

/** True when a connection to `address` must not be made. */
export function isBlockedAddress(address: string, allowPrivateNetwork: boolean): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns IPv4-mapped IPv6 (::ffff:10.0.0.1) into the IPv4 it carries.
    parsed = ipaddr.process(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return true;
  }
  const range = parsed.range();
  if (range === 'linkLocal') return true;
  if (allowPrivateNetwork) return false;
  // Everything but plain unicast: loopback, private, CGNAT, unique-local, multicast,
  // reserved, and the IPv6 forms that wrap an IPv4 address (6to4, NAT64, Teredo).
  return range !== 'unicast';
}

function refusal(host: string): TargetRefused {
  // The resolved address is not named: it would tell a caller about our internal network.
  return new TargetRefused('url_not_allowed', `${host} is, or resolves to, a loopback, private or link-local address`);
}

/** Resolves the URL's host and refuses it unless every address may be reached. */
export async function checkTarget(url: URL, allowPrivateNetwork: boolean): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    if (isBlockedAddress(host, allowPrivateNetwork)) throw refusal(host);
    return;
  }
  let addresses: Array<{ address: string }>;
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new TargetRefused('url_unresolvable', `${host} does not resolve`);
  }
  if (addresses.length === 0) throw new TargetRefused('url_unresolvable', `${host} does not resolve`);
  if (addresses.some((a) => isBlockedAddress(a.address, allowPrivateNetwork))) throw refusal(host);
}

/** A `lookup` for http.request that refuses blocked addresses at connect time (IP-literal hosts never call it: check those first). */
export function guardedLookup(allowPrivateNetwork: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as unknown as Array<{ address: string; family: number }>;
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), '', 4);
      if (list.some((a) => isBlockedAddress(a.address, allowPrivateNetwork))) return callback(refusal(hostname), '', 4);
      if (options.all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/**
 * What listings show of a target URL. The URL itself is stored sealed: a Slack
 * incoming-webhook URL is a bearer credential in its path, and tokens often ride
 * in query strings. Standard receivers show origin and path; Slack ones the
 * origin only.
 */
export function displayUrl(url: URL, format: 'standard' | 'slack'): string {
  if (format === 'slack') return `${url.origin}/…`;
  return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
}
