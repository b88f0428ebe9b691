/** The creatives' configuration: how often reviews are asked for, and the approval timeout (the seed's 48 h). */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('creative settings', () => {
  it('default to a 10 min review poll and a 48 h approval timeout', () => {
    const c = loadConfig({});
    expect([c.ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS, c.ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS]).toEqual([600_000, 48 * 3_600_000]);
    const set = loadConfig({ ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '250', ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS: '1500' });
    expect([set.ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS, set.ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS]).toEqual([250, 1500]);
  });

  it('refuse bad values, naming the variable', () => {
    const bad: Array<[string, string]> = [
      ['ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS', '0'],
      ['ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS', '99'],
      ['ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS', 'often'],
      ['ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS', '-1'],
      ['ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS', '48h'],
      ['ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS', '50'],
    ];
    for (const [name, value] of bad) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(name));
    }
  });
});
