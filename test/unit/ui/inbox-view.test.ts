/** The inbox and the waiting panel with what a hostile seller may put in its question (src/ui/views/inbox.ts, answer-forms.ts). */
import { describe, expect, it } from 'vitest';
import { sellerInputRequest } from '../../../src/domain/input-request.js';
import { newOperationRow } from '../../../src/store/operation-row.js';
import { inboxRegion } from '../../../src/ui/views/inbox.js';
import { waitingPanel } from '../../../src/ui/views/answer-forms.js';

const t0 = Date.parse('2026-09-01T10:00:00Z');
const attack = `"><script>alert(1)</script><img src=x onerror='y'>`;

describe("a seller's question in the dashboard", () => {
  const request = sellerInputRequest('input-required', { message: `sign ${attack}`, reason: `APPROVAL_${attack}` }, false, t0);
  const row = newOperationRow(
    { id: 'op_1', tenant_id: 't', agent_id: 'a', type: 'create_media_buy', idempotency_key: 'k'.repeat(16), request_body: '{}', created_at: t0 },
    { status: 'input-required', needs_input: 1, input_request: JSON.stringify(request) },
  );
  const forms = { csrf: 'c', canAnswer: true, answersEnabled: true, role: 'approver' };

  it("shows the seller's reason and message escaped, and names the question in every form", () => {
    for (const page of [inboxRegion({ rows: [row], agents: [], now: t0 + 1_000, forms, more: false }).value, waitingPanel(row, forms).value]) {
      expect(page).not.toContain('<script>');
      expect(page).not.toContain('<img');
      expect(page).toContain('sign &quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(page).toContain('Reason: <code>APPROVAL_&quot;&gt;&lt;script&gt;');
      expect(page).toContain('seller status <code>input-required</code>');
      expect(page.match(/name="question_id" value="([^"]+)"/g)).toEqual([
        `name="question_id" value="${request.id}"`,
        `name="question_id" value="${request.id}"`,
      ]);
    }
  });
});
