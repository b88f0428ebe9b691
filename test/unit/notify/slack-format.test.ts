import { describe, expect, it } from 'vitest';
import { slackEscape, slackMessage } from '../../../src/notify/slack-format.js';

const body = (type: string, data: Record<string, unknown>) => ({ id: 'ntf_abc', type, created_at: '2026-03-01T12:00:00.000Z', tenant_id: 't', data });

describe('slackMessage', () => {
  it('says what happened, to which operation, its status, and links to it', () => {
    const m = slackMessage(body('operation.completed', { operation: { id: 'op_1', type: 'create_media_buy', status: 'completed', result: { media_buy_id: 'mb_9' } } }), 'https://orch.example.net');
    expect(m.text).toContain('Operation completed');
    expect(m.text).toContain('create_media_buy');
    expect(m.text).toContain('op_1');
    expect(m.text).toContain('completed');
    expect(m.text).toContain('mb_9');
    expect(m.text).toContain('<https://orch.example.net/operations/op_1|Open the operation>');
    expect(JSON.stringify(m.blocks)).toContain('"url":"https://orch.example.net/operations/op_1"');
  });

  it('uses the link the notification carries, and shows the message of an input request', () => {
    const m = slackMessage(
      body('operation.input_required', { operation: { id: 'op_2', type: 'create_media_buy', status: 'input-required' }, message: 'Approve <budget> & dates', link: 'https://x.example/operations/op_2', reminder: true }),
      undefined,
    );
    expect(m.text).toContain('Input required (reminder)');
    expect(m.text).toContain('Approve &lt;budget&gt; &amp; dates');
    expect(m.text).toContain('<https://x.example/operations/op_2|Open the operation>');
  });

  it('without a public URL there is no link, not a broken one', () => {
    const m = slackMessage(body('operation.failed', { operation: { id: 'op_3', type: 'get_products', status: 'failed' } }), undefined);
    expect(m.text).not.toContain('http');
    expect(m.blocks.some((b) => b.type === 'actions')).toBe(false);
  });

  it('escapes Slack control characters only', () => {
    expect(slackEscape('a<b>&c*d')).toBe('a&lt;b&gt;&amp;c*d');
  });
});

describe('a media buy notification as a Slack message', () => {
  it("says which buy, its status and spend, and links to the buy's page", () => {
    const msg = slackMessage(
      {
        id: 'ntf_9',
        type: 'media_buy.underpacing',
        data: { media_buy: { id: 'buy_1', media_buy_id: 'mb_<7>', status: 'active', delivery: { spend: 12.5, currency: 'USD' } }, link: 'https://orch.example/media-buys/buy_1' },
      },
      undefined,
    );
    expect(msg.text).toBe('Media buy under-pacing: media buy `mb_&lt;7&gt;`, status *active*, spent 12.5 USD\n<https://orch.example/media-buys/buy_1|Open the media buy>');
  });

  it("a creative's rejection names the creative and the seller's reason", () => {
    const msg = slackMessage(
      {
        id: 'ntf_10',
        type: 'creative.rejected',
        data: {
          media_buy: { id: 'buy_1', media_buy_id: 'mb_7', status: 'pending_creatives' },
          event: { kind: 'creative_rejected', detail: { creative_id: 'cr_<1>', name: 'Banner', rejection_reason: 'Landing page <off-brand>' } },
          link: 'https://orch.example/media-buys/buy_1',
        },
      },
      undefined,
    );
    expect(msg.text).toBe(
      'Creative rejected: creative `cr_&lt;1&gt;` (Banner), media buy `mb_7`, status *pending_creatives*\nreason: Landing page &lt;off-brand&gt;\n<https://orch.example/media-buys/buy_1|Open the media buy>',
    );
  });
});
