/** Status reads of live buys grouped per seller and account (src/engine/media-buys/status-reads.ts). */
import { describe, expect, it } from 'vitest';
import { GroupedStatusReads, MAX_BUYS_PER_STATUS_READ, statusGroupKey } from '../../../src/engine/media-buys/status-reads.js';

function recorder() {
  const calls: string[][] = [];
  const send = async (ids: string[]) => {
    calls.push(ids);
    return { asked: ids };
  };
  return { calls, send };
}

describe('grouped status reads', () => {
  it('the buys of one seller and account asking in the same turn share one call, and each gets its reply', async () => {
    const reads = new GroupedStatusReads<{ asked: string[] }>();
    const { calls, send } = recorder();
    const key = statusGroupKey('agent_1', '{"account_id":"acc"}');
    const [a, b, c] = await Promise.all([reads.read(key, 'mb_1', send), reads.read(key, 'mb_2', send), reads.read(key, 'mb_1', send)]);
    expect(calls).toEqual([['mb_1', 'mb_2']]);
    expect(a).toEqual({ asked: ['mb_1', 'mb_2'] });
    expect(b).toBe(a);
    expect(c).toBe(a);
    // A later turn is a call of its own.
    await reads.read(key, 'mb_3', send);
    expect(calls).toEqual([['mb_1', 'mb_2'], ['mb_3']]);
  });

  it('another seller or another account is another call', async () => {
    const reads = new GroupedStatusReads<{ asked: string[] }>();
    const { calls, send } = recorder();
    await Promise.all([
      reads.read(statusGroupKey('agent_1', '{"account_id":"a"}'), 'mb_1', send),
      reads.read(statusGroupKey('agent_1', '{"account_id":"b"}'), 'mb_2', send),
      reads.read(statusGroupKey('agent_2', '{"account_id":"a"}'), 'mb_3', send),
      reads.read(statusGroupKey('agent_1', null), 'mb_4', send),
    ]);
    expect(calls.sort()).toEqual([['mb_1'], ['mb_2'], ['mb_3'], ['mb_4']]);
  });

  it('a group holds at most MAX_BUYS_PER_STATUS_READ buys; the rest go in the next call', async () => {
    const reads = new GroupedStatusReads<{ asked: string[] }>();
    const { calls, send } = recorder();
    const key = statusGroupKey('agent_1', null);
    const ids = Array.from({ length: MAX_BUYS_PER_STATUS_READ + 3 }, (_, i) => `mb_${i}`);
    const replies = await Promise.all(ids.map((id) => reads.read(key, id, send)));
    expect(calls.map((c) => c.length)).toEqual([MAX_BUYS_PER_STATUS_READ, 3]);
    expect(calls.flat()).toEqual(ids);
    ids.forEach((id, i) => expect(replies[i]!.asked).toContain(id));
  });

  it("a failed call is every member's failure, and the next turn asks again", async () => {
    const reads = new GroupedStatusReads<string>();
    let n = 0;
    const send = async () => {
      n++;
      if (n === 1) throw new Error('seller down');
      return 'ok';
    };
    const key = statusGroupKey('agent_1', null);
    const results = await Promise.allSettled([reads.read(key, 'mb_1', send), reads.read(key, 'mb_2', send)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(n).toBe(1);
    await expect(reads.read(key, 'mb_1', send)).resolves.toBe('ok');
  });
});
