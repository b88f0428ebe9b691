import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('subscription configuration', () => {
  it('defaults to the Standard Webhooks schedule of about a day and a 15 s timeout', () => {
    const c = loadConfig({});
    expect(c.ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS).toEqual([5000, 300000, 1800000, 7200000, 18000000, 36000000, 50400000]);
    expect(c.ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS).toBe(15000);
  });

  it('reads a comma-separated schedule, spaces allowed', () => {
    expect(loadConfig({ ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS: '50, 100,200' }).ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS).toEqual([50, 100, 200]);
  });

  it('refuses a bad schedule or timeout with a message naming the variable', () => {
    for (const bad of ['5s,10s', '100,,200', '0,100', '-5', '1.5', '999999999999']) {
      let err: unknown;
      try {
        loadConfig({ ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS: bad });
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toContain('ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS');
    }
    expect(() => loadConfig({ ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS: '0' })).toThrow(/ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS/);
    expect(() => loadConfig({ ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS: 'soon' })).toThrow(/ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS/);
  });
});
