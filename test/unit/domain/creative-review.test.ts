/** Following a creative's review: what the seller's answers change, stalls, the next look. */
import { describe, expect, it } from 'vitest';
import { approvalsOfBuy, nextCreativeCheck, NO_REASON, observe, readListCreatives, readSyncReply, stallIfDue, type TrackedCreative } from '../../../src/domain/creative-review.js';

const NOW = 10_000_000;
const creative = (over: Partial<TrackedCreative> = {}): TrackedCreative => ({
  creative_id: 'cr_1',
  name: 'Banner',
  status: 'pending_review',
  approvals: [],
  package_ids: ['pkg_1'],
  rejection_reason: null,
  operation_id: 'op_1',
  sync_state: 'synced',
  sent_at: NOW - 1_000,
  synced_at: NOW - 900,
  review_deadline_at: NOW + 5_000,
  stalled: 0,
  inbox_state: null,
  decided_at: null,
  ...over,
});
const policy = { pollIntervalMs: 600, approvalTimeoutMs: 6_000 };

describe('observe', () => {
  it('an approval by the library is told once, with when it was decided', () => {
    const change = observe(creative(), { creative_id: 'cr_1', status: 'approved', updated_at: NOW - 10 }, NOW - 500, 'poll', NOW)!;
    expect(change.patch).toEqual({ status: 'approved', decided_at: NOW, seller_updated_at: NOW - 10 });
    expect(change.events).toEqual([{ source: 'poll', kind: 'creative_approved', detail: { creative_id: 'cr_1', name: 'Banner', package_ids: ['pkg_1'], operation_id: 'op_1', status: 'approved', from: 'pending_review' } }]);
    // The same word again changes nothing.
    expect(observe(creative({ status: 'approved' }), { creative_id: 'cr_1', status: 'approved' }, NOW, 'poll', NOW)).toBeNull();
  });

  it("a package's rejection is the buy's, with the seller's reason, owed to a person", () => {
    const change = observe(creative(), { creative_id: 'cr_1', approvals: [{ package_id: 'pkg_1', status: 'rejected', rejection_reason: 'too loud' }] }, NOW, 'poll', NOW)!;
    expect(change.patch).toMatchObject({ status: 'rejected', rejection_reason: 'too loud', inbox_state: 'owed', dismissed_at: null });
    expect(change.events[0]).toMatchObject({ kind: 'creative_rejected', detail: { rejection_reason: 'too loud' } });
  });

  it('a library rejection without a reason says so; a reason given later is recorded and asked again', () => {
    const first = observe(creative(), { creative_id: 'cr_1', status: 'rejected' }, NOW, 'poll', NOW)!;
    expect(first.patch.rejection_reason).toBe(NO_REASON);
    const asked = creative({ status: 'rejected', rejection_reason: NO_REASON, inbox_state: 'asked' });
    const later = observe(asked, { creative_id: 'cr_1', approvals: [{ package_id: 'pkg_1', status: 'rejected', rejection_reason: 'bad landing page' }] }, NOW, 'poll', NOW)!;
    expect(later.patch).toMatchObject({ rejection_reason: 'bad landing page', inbox_state: 'owed' });
    expect(later.events.map((e) => e.kind)).toEqual(['creative_rejection_updated']);
  });

  it('approvals on every package approve it; some still pending move processing to pending_review only', () => {
    const two = creative({ status: 'processing', package_ids: ['a', 'b'] });
    const partial = observe(two, { creative_id: 'cr_1', approvals: [{ package_id: 'a', status: 'approved' }, { package_id: 'b', status: 'pending_review' }] }, NOW, 'poll', NOW)!;
    expect(partial.patch.status).toBe('pending_review');
    const all = observe({ ...two, status: 'pending_review' }, { creative_id: 'cr_1', approvals: [{ package_id: 'a', status: 'approved' }, { package_id: 'b', status: 'approved' }] }, NOW, 'poll', NOW)!;
    expect(all.patch.status).toBe('approved');
  });

  it('an answer asked for while the creative was being sent, or before its send ended, or about a send that failed, changes nothing', () => {
    // A correction on its way: the seller may still speak of the rejected version before it.
    expect(observe(creative({ sync_state: 'sending', synced_at: null }), { creative_id: 'cr_1', status: 'rejected' }, NOW, 'poll', NOW)).toBeNull();
    expect(observe(creative({ synced_at: NOW }), { creative_id: 'cr_1', status: 'rejected' }, NOW - 1, 'poll', NOW)).toBeNull();
    expect(observe(creative({ synced_at: NOW }), { creative_id: 'cr_1', status: 'rejected' }, NOW, 'poll', NOW)).not.toBeNull();
    expect(observe(creative({ sync_state: 'failed' }), { creative_id: 'cr_1', status: 'approved' }, NOW, 'poll', NOW)).toBeNull();
  });

  it('a decision ends a stall', () => {
    const change = observe(creative({ stalled: 1 }), { creative_id: 'cr_1', status: 'approved' }, NOW, 'poll', NOW)!;
    expect(change.patch).toMatchObject({ stalled: 0, stalled_at: null, status: 'approved' });
  });
});

describe('stallIfDue and nextCreativeCheck', () => {
  it('a review past its deadline is stalled once, never one decided or whose send failed', () => {
    expect(stallIfDue(creative(), NOW)).toBeNull();
    const due = creative({ review_deadline_at: NOW });
    expect(stallIfDue(due, NOW)).toMatchObject({ patch: { stalled: 1, stalled_at: NOW }, events: [{ source: 'timer', kind: 'creative_stalled', detail: { waited_ms: 1_000 } }] });
    expect(stallIfDue({ ...due, stalled: 1 }, NOW)).toBeNull();
    expect(stallIfDue({ ...due, status: 'approved' }, NOW)).toBeNull();
    expect(stallIfDue({ ...due, sync_state: 'failed' }, NOW)).toBeNull();
  });

  it('looks again every interval (jittered up), no later than a deadline, and not at all when nothing is followed', () => {
    expect(nextCreativeCheck([creative()], policy, NOW, () => 0)).toBe(NOW + 600);
    expect(nextCreativeCheck([creative()], policy, NOW, () => 1)).toBe(NOW + 660);
    expect(nextCreativeCheck([creative({ review_deadline_at: NOW + 100 })], policy, NOW, () => 0)).toBe(NOW + 100);
    // A stalled review is followed at the usual pace; its deadline no longer counts.
    expect(nextCreativeCheck([creative({ review_deadline_at: NOW - 5, stalled: 1 })], policy, NOW, () => 0)).toBe(NOW + 600);
    expect(nextCreativeCheck([creative({ status: 'approved' }), creative({ sync_state: 'failed' })], policy, NOW, () => 0)).toBeNull();
    // A rejection still owed to a person keeps it looked at.
    expect(nextCreativeCheck([creative({ status: 'rejected', inbox_state: 'owed' })], policy, NOW, () => 0)).toBe(NOW + 600);
  });
});

describe("reading the seller's answers", () => {
  it('list_creatives: known statuses and the next cursor', () => {
    const read = readListCreatives({
      creatives: [
        { creative_id: 'a', status: 'approved', updated_date: '2026-01-01T00:00:00Z' },
        { creative_id: 'b', status: 'weird' },
        { status: 'approved' },
      ],
      pagination: { has_more: true, cursor: 'c2' },
    });
    expect(read).toEqual({ ok: true, items: [{ creative_id: 'a', status: 'approved', updated_at: Date.parse('2026-01-01T00:00:00Z') }], cursor: 'c2' });
    expect(readListCreatives({}).ok).toBe(false);
  });

  it("get_media_buys: each creative's approvals across the buy's packages, reasons only on rejections", () => {
    const map = approvalsOfBuy({
      packages: [
        { package_id: 'p1', creative_approvals: [{ creative_id: 'a', approval_status: 'rejected', rejection_reason: ' no ' }, { creative_id: 'b', approval_status: 'approved', rejection_reason: 'x' }] },
        { package_id: 'p2', creative_approvals: [{ creative_id: 'a', approval_status: 'approved' }, { creative_id: 'c', approval_status: 'bogus' }] },
        { package_id: 'p3' },
      ],
    });
    expect(map.get('a')).toEqual([{ package_id: 'p1', status: 'rejected', rejection_reason: 'no' }, { package_id: 'p2', status: 'approved' }]);
    expect(map.get('b')).toEqual([{ package_id: 'p1', status: 'approved' }]);
    expect(map.has('c')).toBe(false);
  });

  it("sync_creatives: per item, its action, its advisory status, a failed item's errors", () => {
    const items = readSyncReply({
      creatives: [
        { creative_id: 'a', action: 'created', status: 'approved', assigned_to: ['p1'] },
        { creative_id: 'b', action: 'failed', errors: [{ code: 'VALIDATION_ERROR', message: 'no assets' }] },
      ],
    });
    expect(items.get('a')).toEqual({ action: 'created', advisory_status: 'approved', assigned_to: ['p1'] });
    expect(items.get('b')).toEqual({ action: 'failed', errors: [{ code: 'VALIDATION_ERROR', message: 'no assets' }] });
  });
});
