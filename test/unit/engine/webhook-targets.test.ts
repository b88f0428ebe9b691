/**
 * The per-process memory of webhook targets (src/engine/webhook-targets.ts): a
 * target is kept only once its task id is bound (the one column of it that ever
 * changes, once, from null), so a binding is always seen; a kept one is served
 * without a read; the memory is bounded.
 */
import { describe, expect, it, vi } from 'vitest';
import { WebhookTargets } from '../../../src/engine/webhook-targets.js';
import type { WebhookTarget } from '../../../src/store/operations-repo.js';

const target = (token: string, taskId: string | null): WebhookTarget => ({
  id: `op-${token}`,
  agent_id: 'agent-1',
  type: 'create_media_buy',
  task_id: taskId,
  webhook_mode: 'hmac',
  webhook_secret_enc: `sealed-${token}`,
});

describe('webhook targets kept per process', () => {
  it('reads a target until its task is bound, then serves it without reading', async () => {
    let taskId: string | null = null;
    const read = vi.fn(async (token: string) => (token === 'a' ? target('a', taskId) : undefined));
    const targets = new WebhookTargets(read);

    expect((await targets.get('a'))?.task_id).toBeNull();
    expect((await targets.get('a'))?.task_id).toBeNull();
    expect(read).toHaveBeenCalledTimes(2);
    taskId = 'task-1';
    expect((await targets.get('a'))?.task_id).toBe('task-1');
    expect(await targets.get('a')).toEqual(target('a', 'task-1'));
    expect(await targets.get('a')).toEqual(target('a', 'task-1'));
    expect(read).toHaveBeenCalledTimes(3);
  });

  it('keeps no unknown token, and a caller cannot change what is kept', async () => {
    const read = vi.fn(async (token: string) => (token === 'a' ? target('a', 't') : undefined));
    const targets = new WebhookTargets(read);
    expect(await targets.get('nope')).toBeUndefined();
    expect(await targets.get('nope')).toBeUndefined();
    expect(read).toHaveBeenCalledTimes(2);
    await targets.get('a');
    const kept = await targets.get('a');
    expect(() => {
      (kept as { task_id: string | null }).task_id = 'other';
    }).toThrow();
    expect((await targets.get('a'))?.task_id).toBe('t');
  });

  it('holds at most its bound, dropping the oldest first', async () => {
    const read = vi.fn(async (token: string) => target(token, 't'));
    const targets = new WebhookTargets(read, 2);
    await targets.get('a');
    await targets.get('b');
    await targets.get('c');
    expect(read).toHaveBeenCalledTimes(3);
    await targets.get('b');
    await targets.get('c');
    expect(read).toHaveBeenCalledTimes(3);
    await targets.get('a');
    expect(read).toHaveBeenCalledTimes(4);
  });
});
