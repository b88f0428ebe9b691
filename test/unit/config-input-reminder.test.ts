/** ADCP_ORCH_INPUT_REMINDER_MS: the first reminder's wait, which every later gap doubles. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('ADCP_ORCH_INPUT_REMINDER_MS', () => {
  it('defaults to 5 minutes and takes whole milliseconds from 100 up', () => {
    expect(loadConfig({}).ADCP_ORCH_INPUT_REMINDER_MS).toBe(300_000);
    expect(loadConfig({ ADCP_ORCH_INPUT_REMINDER_MS: '100' }).ADCP_ORCH_INPUT_REMINDER_MS).toBe(100);
  });

  it('refuses 0 (reminders without end), too little, fractions and words, naming the variable', () => {
    for (const bad of ['0', '99', '1.5', 'soon', '-300000']) {
      expect(() => loadConfig({ ADCP_ORCH_INPUT_REMINDER_MS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ ADCP_ORCH_INPUT_REMINDER_MS: bad }), bad).toThrow(/ADCP_ORCH_INPUT_REMINDER_MS/);
    }
  });
});
