/** The generated SDK tables must match the installed SDK; rerun scripts/generate-sdk-tables.ts when this fails. */
import { describe, expect, it } from 'vitest';
import { buildSdkTables } from '../../../scripts/sdk-tables.js';
import { SDK_TABLES } from '../../../src/adcp/sdk-tables.js';

describe('generated SDK tables', () => {
  it('are what the installed @adcp/sdk says', async () => {
    expect(SDK_TABLES).toEqual(await buildSdkTables());
  });

  it('know the tasks the orchestrator relies on', () => {
    expect(SDK_TABLES.mutatingTasks).toEqual(expect.arrayContaining(['create_media_buy', 'update_media_buy', 'sync_plans', 'report_plan_outcome']));
    expect(SDK_TABLES.mutatingTasks).not.toContain('get_products');
    expect(SDK_TABLES.notifyingTasks).toContain('create_media_buy');
    expect(SDK_TABLES.errorRecovery.RATE_LIMITED).toBe('transient');
  });
});
