/** Poll and list replies (AdCP spec, poll and list responses), and poll failures that must not look like task failures. */
import { describe, expect, it } from 'vitest';
import { listPageFromPayload, taskReplyFromPoll } from '../../../src/adcp/poll.js';
import { protocolPayload } from '../../../src/adcp/raw-reply.js';
import { AdcpTransportError } from '../../../src/adcp/types.js';

describe('taskReplyFromPoll', () => {
  it('returns the task status with its result as data and its error block as error', () => {
    const reply = taskReplyFromPoll(
      'get_task_status',
      {
        task_id: 'tsk_1',
        task_type: 'create_media_buy',
        status: 'failed',
        updated_at: '2026-08-20T10:00:00Z',
        error: { code: 'BUDGET_EXHAUSTED', message: 'spent' },
        result: { errors: [{ code: 'BUDGET_EXHAUSTED' }] },
      },
      'tsk_1',
    );
    expect(reply).toMatchObject({
      status: 'failed',
      taskId: 'tsk_1',
      data: { errors: [{ code: 'BUDGET_EXHAUSTED' }] },
      error: { code: 'BUDGET_EXHAUSTED', message: 'spent', recovery: 'terminal' },
      timestamp: Date.parse('2026-08-20T10:00:00Z'),
    });
  });

  it('without result (3.0 tasks/get) the whole reply is the data; an off-enum status is unknown', () => {
    const payload = { task_id: 'tsk_2', status: 'input_required' };
    const reply = taskReplyFromPoll('tasks/get', payload, 'tsk_2');
    expect(reply.status).toBe('unknown');
    expect(reply.data).toBe(payload);
  });

  it('a poll answered with an error is thrown, never turned into a failed task', () => {
    expect(() => taskReplyFromPoll('tasks/get', { errors: [{ code: 'TASK_NOT_FOUND' }] }, 'tsk_3')).toThrow(AdcpTransportError);
    try {
      protocolPayload({ protocol: 'mcp', result: { isError: true, structuredContent: { adcp_error: { code: 'RATE_LIMITED', retry_after: 7 } } } }, 'tasks/get');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AdcpTransportError);
      expect((err as AdcpTransportError).adcpError).toEqual({ code: 'RATE_LIMITED', recovery: 'transient', retryAfterSeconds: 7 });
    }
  });
});

describe('listPageFromPayload', () => {
  it('maps tasks and pagination', () => {
    const page = listPageFromPayload('tasks/list', {
      query_summary: {},
      tasks: [
        { task_id: 'a', task_type: 'create_media_buy', status: 'submitted', created_at: 'c', updated_at: 'u', context: { op: 1 } },
        { task_type: 'no id, skipped', status: 'working' },
      ],
      pagination: { has_more: true, cursor: 'next' },
    });
    expect(page).toEqual({
      tasks: [{ taskId: 'a', taskType: 'create_media_buy', status: 'submitted', createdAt: 'c', updatedAt: 'u', context: { op: 1 } }],
      hasMore: true,
      cursor: 'next',
    });
  });

  it('has_more without a cursor cannot be followed', () => {
    expect(listPageFromPayload('list_tasks', { tasks: [], pagination: { has_more: true } }).hasMore).toBe(false);
  });
});
