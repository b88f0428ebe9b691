/** ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: default, accepted values, and a clear refusal of bad ones. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('ADCP_ORCH_INSTANCE_DEAD_AFTER_MS', () => {
  it('defaults to 10 s and takes whole milliseconds from 1 s to an hour', () => {
    expect(loadConfig({}).ADCP_ORCH_INSTANCE_DEAD_AFTER_MS).toBe(10_000);
    expect(loadConfig({ ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: '1000' }).ADCP_ORCH_INSTANCE_DEAD_AFTER_MS).toBe(1_000);
    expect(loadConfig({ ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: '3600000' }).ADCP_ORCH_INSTANCE_DEAD_AFTER_MS).toBe(3_600_000);
  });

  it.each([
    ['999', /ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: must be at least 1000 ms/],
    ['0', /at least 1000 ms/],
    ['3600001', /ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: must be at most 3600000 ms/],
    ['1500.5', /ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: must be a whole number of milliseconds/],
    ['soon', /ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: must be a number of milliseconds/],
  ])('refuses %s', (value, message) => {
    expect(() => loadConfig({ ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: value })).toThrow(message);
  });
});
