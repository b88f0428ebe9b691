/** The live media buys' configuration: report grace, status poll interval, clock skew, the sandbox's report interval. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('live media buy settings', () => {
  it('default to 2 h of grace, a 15 min status poll, 5 min of clock skew and a 10 s sandbox period', () => {
    const c = loadConfig({});
    expect([c.ADCP_ORCH_REPORT_GRACE_MS, c.ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS, c.ADCP_ORCH_REPORT_CLOCK_SKEW_MS, c.ADCP_ORCH_SANDBOX_REPORT_INTERVAL_MS]).toEqual([7_200_000, 900_000, 300_000, 10_000]);
    expect(loadConfig({ ADCP_ORCH_REPORT_GRACE_MS: '0' }).ADCP_ORCH_REPORT_GRACE_MS).toBe(0);
  });

  it('refuse bad values, naming the variable', () => {
    const bad: Array<[string, string]> = [
      ['ADCP_ORCH_REPORT_GRACE_MS', '-1'],
      ['ADCP_ORCH_REPORT_GRACE_MS', 'two hours'],
      ['ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS', '0'],
      ['ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS', '99'],
      ['ADCP_ORCH_SANDBOX_REPORT_INTERVAL_MS', '50'],
      ['ADCP_ORCH_SANDBOX_REPORT_INTERVAL_MS', '1.5'],
      ['ADCP_ORCH_REPORT_CLOCK_SKEW_MS', '-5'],
    ];
    for (const [name, value] of bad) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(name));
    }
  });
});
