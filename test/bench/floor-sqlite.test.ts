/**
 * The durable floors' group committer (bench/lib/floor-sqlite.ts): what the benches
 * compare the orchestrator against must itself keep the contract it stands for, one
 * COMMIT per event-loop turn and nothing acknowledged before it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openFloorDb, TurnCommitter } from '../../bench/lib/floor-sqlite.js';

describe('floor TurnCommitter', () => {
  let dir: string;
  let db: SQLite.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'floor-test-'));
    db = openFloorDb(join(dir, 'floor.db'), 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)');
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens the file with WAL and synchronous=FULL', () => {
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
  });

  it('commits every write queued in one turn in one transaction, visible to another connection once resolved', async () => {
    const committer = new TurnCommitter(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const other = new SQLite(join(dir, 'floor.db'), { readonly: true });
    try {
      const writes = Array.from({ length: 50 }, (_, i) => committer.write(() => insert.run(`v${i}`).changes));
      // Nothing is committed before the turn ends.
      expect(other.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
      expect(await Promise.all(writes)).toEqual(Array(50).fill(1));
      expect(other.prepare('SELECT count(*) FROM t').pluck().get()).toBe(50);
      // Once every callback of the loop has run (a timer fires after the check phase), still one COMMIT.
      await new Promise((r) => setTimeout(r, 5));
      expect(committer.stats).toEqual({ commits: 1, writes: 50 });
      await committer.write(() => insert.run('later'));
      expect(committer.stats).toEqual({ commits: 2, writes: 51 });
    } finally {
      other.close();
    }
  });

  it('rejects only the write that failed; the rest of its group commits', async () => {
    const committer = new TurnCommitter(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const results = await Promise.allSettled([committer.write(() => insert.run('a')), committer.write(() => insert.run('a')), committer.write(() => insert.run('b'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(db.prepare('SELECT v FROM t ORDER BY v').pluck().all()).toEqual(['a', 'b']);
  });
});
