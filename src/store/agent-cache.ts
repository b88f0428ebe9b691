/**
 * Agent rows kept per process: every send and poll reads its agent, and agents
 * change rarely (registration, a new address, new credentials).
 *
 * Invalidation: any write through AgentsRepo empties the cache at once. Another
 * process may write the same database too:
 *   - SQLite: the `adcp-orchestrator agents …` CLI, or a second store on the file.
 *     `PRAGMA data_version` on our connection changes whenever another connection
 *     has committed (any table); it costs one statement of a few microseconds, so
 *     it is read before every cached hit and a change empties the cache.
 *   - PostgreSQL: several instances share the database and there is no such cheap
 *     counter; entries live at most TTL_MS (1 s), so a credential changed on
 *     another instance is used here within a second.
 */
import type { AgentsTable } from './schema.js';
import { setBounded } from '../bounded-map.js';

export const TTL_MS = 1_000;

interface Entry {
  row: AgentsTable;
  at: number;
}

export class AgentCache {
  private readonly rows = new Map<string, Entry>();
  private seenVersion: number | undefined;

  /** `dataVersion` (SQLite) says whether another connection committed; without it, entries expire after TTL_MS. */
  constructor(
    private readonly dataVersion?: () => number,
    private readonly now: () => number = Date.now,
    private readonly max = 1_000,
  ) {}

  get(id: string): AgentsTable | undefined {
    this.checkVersion();
    const entry = this.rows.get(id);
    if (!entry) return undefined;
    if (!this.dataVersion && this.now() - entry.at > TTL_MS) {
      this.rows.delete(id);
      return undefined;
    }
    // A copy: a caller changing its row must not change everyone's.
    return { ...entry.row };
  }

  put(row: AgentsTable): void {
    this.checkVersion();
    setBounded(this.rows, row.id, { row: { ...row }, at: this.now() }, this.max);
  }

  clear(): void {
    this.rows.clear();
  }

  private checkVersion(): void {
    if (!this.dataVersion) return;
    const version = this.dataVersion();
    if (version !== this.seenVersion) {
      this.rows.clear();
      this.seenVersion = version;
    }
  }
}
