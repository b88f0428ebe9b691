import { describe, expect, it } from 'vitest';
import { checkTarget, displayUrl, isBlockedAddress, TargetRefused } from '../../../src/notify/subscription-target.js';

describe('isBlockedAddress', () => {
  it('lets public unicast through', () => {
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(isBlockedAddress(a, false)).toBe(false);
  });

  it('refuses loopback, private, CGNAT, unique-local, unspecified, multicast and IPv4 wrapped in IPv6', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', 'fd00::1', '::', '::ffff:10.0.0.1', '::ffff:127.0.0.1', '64:ff9b::a00:1', '2002:a00:1::']) {
      expect(isBlockedAddress(a, false), a).toBe(true);
    }
  });

  it('with private networks allowed still refuses link-local (cloud metadata)', () => {
    expect(isBlockedAddress('127.0.0.1', true)).toBe(false);
    expect(isBlockedAddress('10.0.0.1', true)).toBe(false);
    expect(isBlockedAddress('169.254.169.254', true)).toBe(true);
    expect(isBlockedAddress('fe80::1', true)).toBe(true);
    expect(isBlockedAddress('::ffff:169.254.169.254', true)).toBe(true);
  });

  it('refuses what is not an address', () => {
    expect(isBlockedAddress('not-an-ip', true)).toBe(true);
  });
});

describe('checkTarget', () => {
  it('resolves names: localhost is refused unless private networks are allowed', async () => {
    await expect(checkTarget(new URL('http://localhost:9/x'), false)).rejects.toMatchObject({ code: 'url_not_allowed' });
    await expect(checkTarget(new URL('http://localhost:9/x'), true)).resolves.toBeUndefined();
  });

  it('refuses literal private addresses, bracketed IPv6 too', async () => {
    await expect(checkTarget(new URL('https://10.0.0.5/hook'), false)).rejects.toBeInstanceOf(TargetRefused);
    await expect(checkTarget(new URL('https://[::1]/hook'), false)).rejects.toBeInstanceOf(TargetRefused);
    await expect(checkTarget(new URL('https://93.184.216.34/hook'), false)).resolves.toBeUndefined();
  });

  it('a name that does not resolve is refused as unresolvable', async () => {
    await expect(checkTarget(new URL('https://no-such-host.invalid/hook'), false)).rejects.toMatchObject({ code: 'url_unresolvable' });
  });
});

describe('displayUrl', () => {
  it('hides query strings, and all of a Slack URL but its origin', () => {
    expect(displayUrl(new URL('https://hooks.example.com/a/b?token=s3cret'), 'standard')).toBe('https://hooks.example.com/a/b?…');
    expect(displayUrl(new URL('https://hooks.slack.com/services/T0/B0/XYZ'), 'slack')).toBe('https://hooks.slack.com/…');
  });
});
