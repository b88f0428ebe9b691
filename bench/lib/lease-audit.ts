/**
 * Every change of an operation's lease, recorded by PostgreSQL itself, so a bench can
 * prove that no two workers held one operation's lease at once, whatever statements
 * the orchestrator uses to claim and release.
 *
 * Installed in the bench's throw-away database only (never by the orchestrator): a
 * trigger on `operations` that, for each row whose lease owner or epoch changes,
 * appends (operation, old/new owner, old/new epoch, new lease_until, clock_timestamp())
 * to an UNLOGGED table (no WAL, no index: the cheapest append; its cost falls on every
 * instance count alike). Rows of one operation are updated one at a time (row lock),
 * so their order in the log (`seq`) is the order of the changes.
 *
 * A claim is a change that raises the epoch and sets an owner; a release sets the owner
 * to NULL. A claim overlaps when the previous change of that operation was another
 * claim (no release in between) whose lease had not yet expired at the moment of the
 * new claim: two holders at once. A claim after an expired, unreleased lease is legal
 * (that is how a dead worker's work is taken over) and counted apart. Times: the log's
 * clock_timestamp() and lease_until (epoch ms from the instances' clocks) are both this
 * host's clock.
 *
 * A claim's time is that of its statement, before its commit; a release's likewise.
 * A second claim can only see a released (or expired) lease after the release
 * committed, so a legal takeover never looks like an overlap.
 */
import type pg from 'pg';

export async function installLeaseAudit(client: pg.ClientBase): Promise<void> {
  await client.query(`
    CREATE UNLOGGED TABLE bench_lease_log (
      seq bigserial,
      operation_id text NOT NULL,
      at timestamptz NOT NULL DEFAULT clock_timestamp(),
      old_owner text, new_owner text,
      old_epoch bigint, new_epoch bigint,
      lease_until bigint
    );
    CREATE FUNCTION bench_log_lease() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO bench_lease_log (operation_id, old_owner, new_owner, old_epoch, new_epoch, lease_until)
      VALUES (NEW.id, OLD.lease_owner, NEW.lease_owner, OLD.lease_epoch, NEW.lease_epoch, NEW.lease_until);
      RETURN NULL;
    END $$;
    CREATE TRIGGER bench_lease_log AFTER UPDATE ON operations FOR EACH ROW
      WHEN (OLD.lease_owner IS DISTINCT FROM NEW.lease_owner OR OLD.lease_epoch IS DISTINCT FROM NEW.lease_epoch)
      EXECUTE FUNCTION bench_log_lease();`);
}

export interface LeaseReport {
  claims: number;
  releases: number;
  /** Operations claimed at least once. */
  operations: number;
  /** Claims made while another claim of the same operation was held and unexpired. */
  overlapping: number;
  /** … of which by another instance (owner). */
  overlappingOtherOwner: number;
  /** Claims of an expired, unreleased lease (legal takeovers). */
  expiredTakeovers: number;
  /** Operations whose last lease change is a claim: still held. */
  stillHeld: number;
  /** First claim to last release, seconds (the phase's sustained window). */
  windowSeconds: number;
  /** Claims per owner. */
  byOwner: Record<string, number>;
}

/** The lease history of the operations whose id starts with `prefix`. */
export async function leaseReport(client: pg.ClientBase, prefix: string): Promise<LeaseReport> {
  const like = `${prefix}%`;
  const { rows } = await client.query(
    `WITH ev AS (
       SELECT *, (new_owner IS NOT NULL AND new_epoch IS DISTINCT FROM old_epoch) AS is_claim,
              (new_owner IS NULL AND old_owner IS NOT NULL) AS is_release
       FROM bench_lease_log WHERE operation_id LIKE $1
     ), seq AS (
       SELECT *, lag(is_claim) OVER w AS prev_is_claim, lag(lease_until) OVER w AS prev_until, lag(new_owner) OVER w AS prev_owner,
              lead(seq) OVER w AS next_seq, (extract(epoch FROM at) * 1000)::bigint AS at_ms
       FROM ev WINDOW w AS (PARTITION BY operation_id ORDER BY seq)
     )
     SELECT count(*) FILTER (WHERE is_claim) AS claims,
            count(*) FILTER (WHERE is_release) AS releases,
            count(DISTINCT operation_id) FILTER (WHERE is_claim) AS operations,
            count(*) FILTER (WHERE is_claim AND prev_is_claim AND at_ms < prev_until) AS overlapping,
            count(*) FILTER (WHERE is_claim AND prev_is_claim AND at_ms < prev_until AND prev_owner <> new_owner) AS overlapping_other,
            count(*) FILTER (WHERE is_claim AND prev_is_claim AND at_ms >= prev_until) AS expired_takeovers,
            count(*) FILTER (WHERE is_claim AND next_seq IS NULL) AS still_held,
            extract(epoch FROM max(at) FILTER (WHERE is_release) - min(at) FILTER (WHERE is_claim)) AS window_seconds
     FROM seq`,
    [like],
  );
  const owners = await client.query(
    `SELECT new_owner AS owner, count(*) AS n FROM bench_lease_log
     WHERE operation_id LIKE $1 AND new_owner IS NOT NULL AND new_epoch IS DISTINCT FROM old_epoch GROUP BY new_owner`,
    [like],
  );
  const r = rows[0];
  return {
    claims: Number(r.claims),
    releases: Number(r.releases),
    operations: Number(r.operations),
    overlapping: Number(r.overlapping),
    overlappingOtherOwner: Number(r.overlapping_other),
    expiredTakeovers: Number(r.expired_takeovers),
    stillHeld: Number(r.still_held),
    windowSeconds: Number(r.window_seconds ?? 0),
    byOwner: Object.fromEntries(owners.rows.map((o) => [o.owner as string, Number(o.n)])),
  };
}

/** Releases so far among the operations whose id starts with `prefix` (a phase ends when all are released). */
export async function releasesSoFar(client: pg.ClientBase, prefix: string): Promise<number> {
  const { rows } = await client.query(`SELECT count(*) AS n FROM bench_lease_log WHERE operation_id LIKE $1 AND new_owner IS NULL AND old_owner IS NOT NULL`, [`${prefix}%`]);
  return Number(rows[0].n);
}
