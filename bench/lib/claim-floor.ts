/**
 * The poll floor with the lease our storage contract adds (BENCHMARKS.md, *Polls: the
 * floor with the lease*): information beside the floor of record, to measure how much of
 * the distance from the floor is the claim itself rather than our code.
 *
 * The floor of record (bench/poll-dispatch.ts) stores each result with one UPDATE.
 * The contract also asks (DESIGN, Storage and scheduling) that due work be claimed in
 * one statement that sets the lease owner and expiry and counts the attempt, durably
 * before the work is sent, and that the result be written only under that lease. This
 * floor does exactly that and nothing else, as cheaply as SQLite allows:
 *
 * - rows shaped like ours where it costs pages: the ~600-byte request body, the lease
 *   columns, the due-timer index and the leased-rows index of our schema;
 * - a page of rows claimed by our claim statement (`UPDATE … WHERE id IN (SELECT … LIMIT
 *   n) RETURNING`), committed before any of its rows is polled; the next page is claimed
 *   ahead while the current one runs, so its claim shares a group commit with results;
 * - each result written by one UPDATE that checks the lease (owner and epoch), releases
 *   it and sets the next timer (due again at once, behind every row already due, so
 *   the table never runs dry), group-committed once per turn of the event loop
 *   (`TurnCommitter`); a worker moves on only after that COMMIT.
 */
import type SQLite from 'better-sqlite3';
import { openFloorDb, TurnCommitter } from './floor-sqlite.js';
import { opId, sampleRequestBody } from './orchestrator.js';

const SCHEMA = `
  CREATE TABLE operations (
    id TEXT PRIMARY KEY, task_id TEXT NOT NULL, status TEXT NOT NULL, request_body TEXT NOT NULL, result TEXT,
    polls INTEGER NOT NULL DEFAULT 0, polled_at INTEGER, next_check_at INTEGER,
    attempt INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, lease_until INTEGER, lease_epoch INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX operations_due ON operations (next_check_at) WHERE next_check_at IS NOT NULL;
  CREATE INDEX operations_leased ON operations (lease_owner) WHERE lease_owner IS NOT NULL;`;

const OWNER = 'floor-instance';
const LEASE_MS = 60_000;

interface Claimed {
  id: string;
  task_id: string;
  lease_epoch: number;
}

export interface PollReply {
  status: string;
  result: unknown;
}

export class ClaimingFloor {
  private readonly db: SQLite.Database;
  private readonly committer: TurnCommitter;
  private readonly claimPage: SQLite.Statement;
  private readonly storeResult: SQLite.Statement;
  private readonly queue: Claimed[] = [];
  private claiming: Promise<void> | undefined;
  /** Results whose lease check matched no row (must stay 0: nobody else holds these rows). */
  lostLeases = 0;
  /** Pages claimed and rows in them (to print the mean page). */
  readonly pages = { claims: 0, rows: 0 };

  /** Creates the file and seeds `rows` due operations. */
  constructor(path: string, rows: number, private readonly pageSize: number) {
    this.db = openFloorDb(path, SCHEMA);
    const insert = this.db.prepare("INSERT INTO operations (id, task_id, status, request_body, next_check_at) VALUES (?, ?, 'submitted', ?, ?)");
    const now = Date.now();
    this.db.transaction(() => {
      for (let i = 0; i < rows; i++) {
        const id = opId('claimed-floor-', i);
        insert.run(id, `task-${id}`, sampleRequestBody(id, `key-${id}`), now - 10_000 + (i % 5000));
      }
    })();
    this.committer = new TurnCommitter(this.db);
    // Our claim statement (src/store/timer-claims.ts), returning what a poll needs.
    this.claimPage = this.db.prepare(`
      UPDATE operations
      SET lease_owner = @owner, lease_until = @until, attempt = attempt + 1, lease_epoch = lease_epoch + 1
      WHERE id IN (
        SELECT id FROM operations
        WHERE next_check_at IS NOT NULL AND next_check_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
        ORDER BY next_check_at LIMIT @limit)
      RETURNING id, task_id, lease_epoch`);
    this.storeResult = this.db.prepare(`
      UPDATE operations
      SET status = @status, result = @result, polls = polls + 1, polled_at = @now, next_check_at = @now,
          lease_owner = NULL, lease_until = NULL
      WHERE id = @id AND lease_owner = @owner AND lease_epoch = @epoch`);
  }

  /** One poll: a claimed row (claiming a page when needed), `poll` of its task, its result stored under the lease. */
  async pollOne(poll: (taskId: string) => Promise<PollReply>): Promise<void> {
    const row = await this.take();
    const reply = await poll(row.task_id);
    const result = reply.result === undefined ? null : JSON.stringify(reply.result);
    const changed = await this.committer.write(
      () => this.storeResult.run({ status: reply.status, result, now: Date.now(), id: row.id, owner: OWNER, epoch: row.lease_epoch }).changes,
    );
    if (changed !== 1) this.lostLeases++;
  }

  /** Rows claimed ahead and not sent yet (still leased, rightly, when a round ends). */
  get claimedAhead(): number {
    return this.queue.length;
  }

  /** Polls stored (sum of the rows' counters), leases still held, for the checks. */
  tally(): { polls: number; leased: number } {
    return this.db.prepare('SELECT coalesce(sum(polls), 0) AS polls, count(lease_owner) AS leased FROM operations').get() as { polls: number; leased: number };
  }

  groupSize(): number {
    return this.committer.stats.writes / Math.max(1, this.committer.stats.commits);
  }

  close(): void {
    this.db.close();
  }

  private async take(): Promise<Claimed> {
    // Claim ahead: the next page's claim commits while this one's rows run.
    if (this.queue.length < this.pageSize / 2) void this.claimAhead();
    while (this.queue.length === 0) {
      await this.claimAhead();
    }
    return this.queue.shift()!;
  }

  private claimAhead(): Promise<void> {
    this.claiming ??= this.committer
      .write(() => this.claimPage.all({ owner: OWNER, until: Date.now() + LEASE_MS, now: Date.now(), limit: this.pageSize }) as Claimed[])
      .then((rows) => {
        this.pages.claims++;
        this.pages.rows += rows.length;
        this.queue.push(...rows);
      })
      .finally(() => (this.claiming = undefined));
    return this.claiming;
  }
}
