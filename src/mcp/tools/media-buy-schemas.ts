/**
 * Output schemas of the media-buy tools, for the JSON the API answers (README, Media
 * buys): open objects, like those of schemas.ts, so a field added later never makes
 * a client reject an answer. The inputs reuse the API's own (src/api/routes/media-buys.ts).
 */
import { z } from 'zod';
import { MEDIA_BUY_STATUSES } from '../../domain/media-buy-status.js';
import { PACING_STATES } from '../../domain/pacing.js';
import { MediaBuyId as ApiMediaBuyId } from '../../api/routes/media-buys.js';

export const MediaBuyId = ApiMediaBuyId.describe('Our id of a media buy (buy_…, as list_media_buys and get_media_buy give it), not the seller’s media_buy_id');

const time = z.string().nullable();

export const MediaBuyOutput = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    media_buy_id: z.string().describe('The seller’s id of the buy'),
    operation_id: z.string().describe('The create_media_buy operation that made it'),
    campaign_id: z.string().nullable(),
    status: z.enum(MEDIA_BUY_STATUSES),
    flight: z.object({ start: time, end: time }).loose(),
    budget: z.object({ amount: z.number().nullable(), currency: z.string().nullable() }).loose(),
    packages: z.array(z.unknown()),
    delivery: z
      .object({
        impressions: z.number(),
        spend: z.number(),
        currency: z.string().nullable(),
        through: time,
        pacing: z.object({ expected_spend: z.number().nullable(), ratio: z.number().nullable(), state: z.enum(PACING_STATES) }).loose(),
      })
      .loose(),
    reports: z
      .object({
        frequency: z.string().nullable(),
        received: z.number(),
        last_sequence: z.number().nullable(),
        next_expected_at: time,
        missing: z.number().describe('Reports that did not come when expected (the orchestrator then asks the seller itself)'),
        final_received: z.boolean(),
      })
      .loose(),
    created_at: time,
    updated_at: time,
    ended_at: time,
  })
  .loose();

export const MediaBuyPageOutput = z
  .object({
    media_buys: z.array(MediaBuyOutput),
    next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last'),
  })
  .loose();

export const DeliveryOutput = z
  .object({
    reports: z.array(
      z
        .object({
          id: z.string(),
          period: z.object({ start: time, end: time }).loose(),
          notification_type: z.string().nullable().describe('scheduled | final | adjusted | window_update | delayed | snapshot (a poll)'),
          sequence_number: z.number().nullable(),
          impressions: z.number(),
          spend: z.number(),
          by_package: z.array(z.unknown()),
          received_at: time,
          source: z.string().describe('webhook | poll'),
          superseded_by: z.string().optional().describe('The report that restated this one; its figures no longer count'),
        })
        .loose(),
    ),
    totals: z
      .object({
        impressions: z.number(),
        spend: z.number(),
        clicks: z.number().nullable(),
        currency: z.string().nullable(),
        periods: z.number(),
        through: time,
      })
      .loose(),
  })
  .loose();
