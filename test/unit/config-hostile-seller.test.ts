/**
 * ADCP_ORCH_MAX_REPLY_BYTES, ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS and
 * ADCP_ORCH_AGENT_MAX_QUEUED_CALLS: defaults, accepted values, and a clear refusal of bad ones.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('limits on what one seller can take of us', () => {
  it('default to a 4 MiB reply, 32 calls at once and 256 waiting per agent', () => {
    const config = loadConfig({});
    expect(config.ADCP_ORCH_MAX_REPLY_BYTES).toBe(4 * 1024 * 1024);
    expect(config.ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS).toBe(32);
    expect(config.ADCP_ORCH_AGENT_MAX_QUEUED_CALLS).toBe(256);
    const set = loadConfig({ ADCP_ORCH_MAX_REPLY_BYTES: '65536', ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS: '1', ADCP_ORCH_AGENT_MAX_QUEUED_CALLS: '0' });
    expect([set.ADCP_ORCH_MAX_REPLY_BYTES, set.ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS, set.ADCP_ORCH_AGENT_MAX_QUEUED_CALLS]).toEqual([65_536, 1, 0]);
  });

  it.each([
    ['ADCP_ORCH_MAX_REPLY_BYTES', '65535', /ADCP_ORCH_MAX_REPLY_BYTES: must be at least 65536 \(64 KiB\)/],
    ['ADCP_ORCH_MAX_REPLY_BYTES', '1073741825', /ADCP_ORCH_MAX_REPLY_BYTES: must be at most 1073741824/],
    ['ADCP_ORCH_MAX_REPLY_BYTES', '4mb', /ADCP_ORCH_MAX_REPLY_BYTES: must be a number of bytes/],
    ['ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS', '0', /ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS: must be at least 1/],
    ['ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS', '2.5', /ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS: must be a whole number/],
    ['ADCP_ORCH_AGENT_MAX_QUEUED_CALLS', '-1', /ADCP_ORCH_AGENT_MAX_QUEUED_CALLS: must be at least 0/],
    ['ADCP_ORCH_AGENT_MAX_QUEUED_CALLS', 'many', /ADCP_ORCH_AGENT_MAX_QUEUED_CALLS: must be a number/],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});
