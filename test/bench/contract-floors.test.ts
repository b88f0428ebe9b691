/**
 * The floors that add our contract's storage to a floor of record (bench/lib/claim-floor.ts,
 * bench/lib/applied-ingest-floor.ts) must do what they stand for, or the distances the
 * benches print from them mean nothing: a poll's row claimed under a lease committed before
 * the poll is sent, its result written under that lease; a webhook delivery deduplicated,
 * applied, recorded and notified before its 200.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAppliedIngestFloor, type AppliedIngestFloor } from '../../bench/lib/applied-ingest-floor.js';
import { ClaimingFloor } from '../../bench/lib/claim-floor.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'contract-floor-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the poll floor with the lease', () => {
  it('sends a row only once its claim is committed, and stores each result under that lease', async () => {
    const floor = new ClaimingFloor(join(dir, 'f.db'), 20, 8);
    const other = new SQLite(join(dir, 'f.db'), { readonly: true });
    const leasedAtSend: number[] = [];
    try {
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let i = 0; i < 10; i++) {
            await floor.pollOne(async (taskId) => {
              // Seen from another connection: the row being polled is already leased.
              leasedAtSend.push(other.prepare('SELECT count(*) FROM operations WHERE task_id = ? AND lease_owner IS NOT NULL').pluck().get(taskId) as number);
              return { status: 'working', result: { n: i } };
            });
          }
        }),
      );
      expect(leasedAtSend).toHaveLength(40);
      expect(leasedAtSend.every((n) => n === 1)).toBe(true);
      const tally = floor.tally();
      expect(tally.polls).toBe(40);
      expect(floor.lostLeases).toBe(0);
      // Only the rows claimed ahead and not sent are still leased; each claim counted an attempt.
      expect(tally.leased).toBe(floor.claimedAhead);
      const attempts = other.prepare('SELECT sum(attempt) FROM operations').pluck().get() as number;
      expect(attempts).toBe(40 + floor.claimedAhead);
    } finally {
      other.close();
      floor.close();
    }
  });
});

describe('the ingest floor with the contract\'s storage', () => {
  let floor: AppliedIngestFloor;
  const secret = randomBytes(32).toString('base64url');
  beforeEach(async () => {
    floor = await startAppliedIngestFloor(dir);
    floor.addOperations([{ id: 'op-1', token: 'tok-1', secret }]);
  });
  afterEach(async () => floor.close());

  const send = (body: object, key = secret) => {
    const text = JSON.stringify(body);
    const ts = String(Math.floor(Date.now() / 1000));
    const mac = createHmac('sha256', key).update(`${ts}.`).update(text).digest('hex');
    return fetch(`${floor.origin}/webhooks/adcp/tok-1`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-adcp-signature': `sha256=${mac}`, 'x-adcp-timestamp': ts }, body: text });
  };

  it('applies, records and notifies a delivery before its 200, and a repeat changes nothing', async () => {
    expect((await send({ idempotency_key: 'k1', status: 'working' })).status).toBe(200);
    expect((await send({ idempotency_key: 'k2', status: 'completed', result: { media_buy_id: 'mb' } })).status).toBe(200);
    const repeat = await send({ idempotency_key: 'k2', status: 'completed', result: { media_buy_id: 'mb' } });
    expect(await repeat.json()).toEqual({ status: 'duplicate' });
    expect((await send({ idempotency_key: 'k3', status: 'failed' }, 'wrong-secret')).status).toBe(401);

    const db = new SQLite(join(dir, 'floor-ingest-applied.db'), { readonly: true });
    try {
      expect(db.prepare("SELECT status, result, next_check_at FROM operations WHERE id = 'op-1'").get()).toEqual({ status: 'completed', result: '{"media_buy_id":"mb"}', next_check_at: null });
      expect(db.prepare('SELECT kind, from_status, to_status FROM events ORDER BY id').all()).toEqual([
        { kind: 'transition', from_status: 'submitted', to_status: 'working' },
        { kind: 'transition', from_status: 'working', to_status: 'completed' },
      ]);
      expect(db.prepare('SELECT type FROM notifications ORDER BY seq').pluck().all()).toEqual(['operation.working', 'operation.completed']);
      expect(floor.tally()).toEqual({ stored: 2, repeats: 1 });
    } finally {
      db.close();
    }
  });
});
