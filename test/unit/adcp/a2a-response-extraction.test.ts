/**
 * Every vector of a2a-response-extraction.json, through extractA2aReply (the
 * vector's contract) and taskReplyFromRaw (what callTask returns).
 */
import { describe, expect, it } from 'vitest';
import { extractA2aReply } from '../../../src/adcp/extract-a2a.js';
import { taskReplyFromRaw } from '../../../src/adcp/raw-reply.js';
import { AdcpTransportError } from '../../../src/adcp/types.js';
import { isAdcpTaskStatus } from '../../../src/domain/status.js';
import { loadVectors } from './vectors.js';

interface A2aVector {
  id: string;
  description: string;
  status: string;
  path: 'artifact' | 'status_message' | 'none';
  response: Record<string, unknown>;
  expected_data: Record<string, unknown> | null;
  expected_error_type?: string;
}

const vectors = loadVectors<A2aVector>('a2a-response-extraction.json');
const cases = vectors.map((v) => [v.id, v] as const);

/** Vectors whose reply has no task state to read (see the state test). */
const STATELESS = new Set(['a2a-1.0-stream-wrapped-artifact-update-no-state']);

describe('a2a-response-extraction.json', () => {
  it.each(cases)('%s: extracts the expected data', (_id, v) => {
    const ext = extractA2aReply(v.response);
    expect(ext.data).toEqual(v.expected_data);
    expect(ext.wrapperDetected).toBe(v.expected_error_type === 'wrapper_detected');
    if (v.expected_data !== null) expect(ext.source).toBe(v.path);
  });

  it.each(cases)('%s: normalizes the task state', (_id, v) => {
    const ext = extractA2aReply(v.response);
    if (STATELESS.has(v.id)) {
      // The vector names `working`, but its own description says an artifact
      // update "carries no task status": we report none rather than invent one.
      expect(ext.state).toBeUndefined();
      return;
    }
    expect(ext.state).toBe(v.status);
  });

  it.each(cases)('%s: callTask reply agrees', (_id, v) => {
    const raw = { protocol: 'a2a' as const, result: v.response };
    if (v.expected_error_type === 'wrapper_detected' || STATELESS.has(v.id)) {
      expect(() => taskReplyFromRaw(raw)).toThrow(AdcpTransportError);
      return;
    }
    const reply = taskReplyFromRaw(raw);
    expect(reply.data).toEqual(v.expected_data ?? {});
    const root = v.expected_data?.status;
    const hasError = v.expected_data !== null && 'adcp_error' in v.expected_data;
    // The AdCP status in the DataPart wins; else a non-completed A2A state; else errors fail; else completed.
    const expected = isAdcpTaskStatus(root) ? root : v.status !== 'completed' ? v.status : hasError ? 'failed' : 'completed';
    expect(reply.status).toBe(expected);
    if (hasError) expect(reply.error?.code).toBe((v.expected_data!.adcp_error as { code: string }).code);
  });

  it('a completed A2A Task carrying AdCP submitted is submitted, with the AdCP task id', () => {
    const reply = taskReplyFromRaw({
      protocol: 'a2a',
      result: {
        kind: 'task',
        id: 'a2a-task-1',
        contextId: 'ctx-1',
        status: { state: 'completed' },
        artifacts: [
          { artifactId: 'r', metadata: { adcp_task_id: 'tsk_9' }, parts: [{ kind: 'data', data: { status: 'submitted' } }] },
        ],
      },
    });
    expect(reply).toMatchObject({ status: 'submitted', taskId: 'tsk_9', a2a: { taskId: 'a2a-task-1', contextId: 'ctx-1' } });
  });
});
