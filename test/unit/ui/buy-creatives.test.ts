/** A buy's creatives on its page: each review as the seller states it, a rejection's reason, a stall, a wait for a person; seller text escaped. */
import { describe, expect, it } from 'vitest';
import type { CreativeRow } from '../../../src/store/index.js';
import { buyCreatives } from '../../../src/ui/views/media-buy/creatives.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const EVIL = '<img src=x onerror=alert(1)>';
const row = (over: Partial<CreativeRow> = {}): CreativeRow => ({
  buy_id: 'buy_1', creative_id: 'cr_1', tenant_id: 't', name: 'Banner', status: 'pending_review', package_ids: '["pkg_1"]', approvals: '[]',
  rejection_reason: null, advisory_status: 'pending_review', operation_id: 'op_sync_1', sync_state: 'synced', sync_error: null, sent_at: NOW - 60_000, synced_at: NOW - 59_000,
  review_deadline_at: NOW + 3_600_000, stalled: 0, stalled_at: null, inbox_state: null, dismissed_at: null, dismissed_by: null, seller_updated_at: null,
  decided_at: null, created_at: NOW - 60_000, updated_at: NOW - 60_000, ...over,
});
const buy = { id: 'buy_1', status: 'pending_creatives' } as never;

describe('the creatives section', () => {
  it('says what the buy waits for when none was sent', () => {
    const html = buyCreatives({ buy, now: NOW, creatives: [] }).value;
    expect(html).toContain('No creatives have been sent to this buy.');
    expect(html).toContain('waits for creatives');
    expect(html).toContain('POST /v1/media-buys/buy_1/creatives');
  });

  it('lists each creative with its review, reason, stall and inbox state; seller text stays text', () => {
    const html = buyCreatives({
      buy,
      now: NOW,
      creatives: [
        row(),
        row({ creative_id: 'cr_2', name: `Bad ${EVIL}`, status: 'rejected', rejection_reason: `Landing page ${EVIL}`, inbox_state: 'asked' }),
        row({ creative_id: 'cr_3', stalled: 1, stalled_at: NOW - 5 }),
        row({ creative_id: 'cr_4', status: 'rejected', rejection_reason: 'no', inbox_state: 'answered', dismissed_at: NOW, dismissed_by: 'ops-lead' }),
      ],
    }).value;
    expect([...html.matchAll(/data-creative-id="([^"]+)"/g)].map((m) => m[1])).toEqual(['cr_1', 'cr_2', 'cr_3', 'cr_4']);
    expect([...html.matchAll(/data-creative-status="([^"]+)"/g)].map((m) => m[1])).toEqual(['pending_review', 'rejected', 'pending_review', 'rejected']);
    expect(html).not.toContain(EVIL);
    expect(html).toContain('Landing page &lt;img');
    expect(html).toContain('waits for a person');
    expect(html).toContain('review stalled');
    expect(html).toContain('dismissed by ops-lead');
    expect(html).toContain('href="/operations/op_sync_1"');
    expect(html).toContain('reply said pending review');
  });
});
