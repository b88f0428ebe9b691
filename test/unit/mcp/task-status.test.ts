/** An operation as an MCP task: the status mapping, and the paragraph a model reads. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { OPERATION_STATUSES } from '../../../src/domain/status.js';
import { DashboardLinks } from '../../../src/mcp/links.js';
import { operationSummary } from '../../../src/mcp/operation-summary.js';
import { taskOf, taskStatusOf } from '../../../src/mcp/task-status.js';

describe('MCP task status of an operation', () => {
  it('maps every operation status', () => {
    const mapped = Object.fromEntries(OPERATION_STATUSES.map((s) => [s, taskStatusOf({ status: s, needs_input: false })]));
    expect(mapped).toEqual({
      requested: 'working',
      calling_adcp: 'working',
      submitted: 'working',
      working: 'working',
      'input-required': 'input_required',
      'auth-required': 'input_required',
      completed: 'completed',
      failed: 'failed',
      rejected: 'failed',
      canceled: 'cancelled',
      unknown: 'working',
    });
  });

  it('is input_required whenever a person is asked, a held buy (still requested) included', () => {
    expect(taskStatusOf({ status: 'requested', needs_input: true })).toBe('input_required');
    expect(taskStatusOf({ status: 'submitted', needs_input: true })).toBe('input_required');
  });

  it('keeps the operation’s id and times', () => {
    const task = taskOf({ id: 'op-1', status: 'submitted', needs_input: false, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:05.000Z', input_message: null }, 1000);
    expect(task).toEqual({ taskId: 'op-1', status: 'working', ttl: null, createdAt: '2026-01-01T00:00:00.000Z', lastUpdatedAt: '2026-01-01T00:00:05.000Z', pollInterval: 1000 });
  });
});

describe('the paragraph beside an operation', () => {
  const links = new DashboardLinks(() => 'https://orch.example.net/');
  const base = { id: 'op-1', type: 'create_media_buy', agent_id: 'ag-1', stalled: false, stalled_reason: null, error: null, result: null };

  it('says a person must decide, and where', () => {
    const text = operationSummary({ ...base, status: 'requested', needs_input: true, input_request: { kind: 'spend_approval', message: 'Over budget.' } }, links);
    expect(text).toContain('waits for a person: a spend approval');
    expect(text).toContain('nothing has been sent to the seller');
    expect(text).toContain('https://orch.example.net/operations/op-1');
    expect(text).toContain('https://orch.example.net/inbox');
    expect(text).toContain('A person must approve (or reject) it');
    // wait_for_operation answers at once while a person is awaited: the model is told to look again later, not to spin on it.
    expect(text).toContain('Until a person has decided, wait_for_operation answers at once');
    expect(text).not.toContain('Call wait_for_operation');
    expect(text).toContain('adcp-orchestrator://operations/op-1');
  });

  it('names the media buy made, the error of one that failed, and a stall', () => {
    expect(operationSummary({ ...base, status: 'completed', needs_input: false, result: { media_buy_id: 'mb_1' } }, links)).toContain('media buy mb_1 was created');
    // An update's reply names the buy too; it made none.
    expect(operationSummary({ ...base, type: 'update_media_buy', status: 'completed', needs_input: false, result: { media_buy_id: 'mb_1' } }, links)).not.toContain('was created');
    expect(operationSummary({ ...base, status: 'rejected', needs_input: false, error: { code: 'POLICY', message: 'no alcohol' } }, links)).toContain('ended rejected (POLICY: no alcohol)');
    const stalled = operationSummary({ ...base, status: 'submitted', needs_input: false, stalled: true, stalled_reason: 'deadline passed' }, links);
    expect(stalled).toContain('queued at the seller');
    expect(stalled).toContain('stalled (deadline passed): a person should look at https://orch.example.net/operations/op-1');
  });
});

describe('ADCP_ORCH_MCP_WAIT_MS', () => {
  it('defaults to 20 s and takes no more', () => {
    expect(loadConfig({}).ADCP_ORCH_MCP_WAIT_MS).toBe(20_000);
    expect(loadConfig({ ADCP_ORCH_MCP_WAIT_MS: '500' }).ADCP_ORCH_MCP_WAIT_MS).toBe(500);
    expect(() => loadConfig({ ADCP_ORCH_MCP_WAIT_MS: '60000' })).toThrow(/ADCP_ORCH_MCP_WAIT_MS: must be at most 20000/);
  });
});
