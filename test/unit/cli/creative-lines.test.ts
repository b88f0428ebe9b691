/** `media-buys show` prints each creative of the buy: its review, a rejection's reason, a stall, a wait for a person. */
import { describe, expect, it } from 'vitest';
import { creativeLine } from '../../../src/cli/media-buy-view.js';
import { presentCreative } from '../../../src/domain/creatives.js';

const T = Date.parse('2026-06-01T12:00:00Z');
const creative = (over: Record<string, unknown> = {}) =>
  presentCreative({
    creative_id: 'cr_1', name: 'Banner', status: 'pending_review', package_ids: '["pkg_1"]', approvals: '[]', rejection_reason: null, advisory_status: 'pending_review',
    operation_id: 'op_sync', sync_state: 'synced', sync_error: null, sent_at: T, synced_at: T, review_deadline_at: T + 1000, stalled: 0, stalled_at: null,
    inbox_state: null, dismissed_at: null, dismissed_by: null, decided_at: null, updated_at: T, ...over,
  });

describe('creativeLine', () => {
  it('says the review, and for a rejection its reason and who must act', () => {
    expect(creativeLine(creative())).toBe('  creative cr_1  pending_review  packages pkg_1  "Banner"\n');
    expect(creativeLine(creative({ status: 'rejected', rejection_reason: 'too loud', inbox_state: 'asked' }))).toBe(
      '  creative cr_1  rejected: too loud  packages pkg_1, waits for a person (operation op_sync)  "Banner"\n',
    );
    expect(creativeLine(creative({ status: 'rejected', rejection_reason: 'x', inbox_state: 'answered', dismissed_at: T, dismissed_by: 'ops' }))).toContain('dismissed by ops');
    expect(creativeLine(creative({ stalled: 1, stalled_at: T, package_ids: '[]' }))).toBe('  creative cr_1  pending_review  no package, review stalled  "Banner"\n');
  });
});
