/** A tenant's own settings (docs/ARCHITECTURE.md, People in the loop): one small JSON document per tenant. */
import type { InputExpiryPolicy } from '../domain/input-timers.js';
import type { PacingThresholds } from '../domain/pacing.js';
import type { GovernedReporting, ReportingFrequency } from '../domain/reporting-webhook.js';
import { CompiledQueries } from './compiled.js';
import type { Db } from './db.js';
import type { Tx } from './tx.js';

export interface TenantSettings {
  /** Buys spending more than this wait for a person's approval before anything is sent. */
  approval_over?: { amount: number; currency: string };
  /** How long each kind of request may wait for a person, and what happens then. */
  input_expiry?: InputExpiryPolicy;
  /** When a live buy counts as under- or over-pacing (src/domain/pacing.ts); the defaults otherwise. */
  pacing?: PacingThresholds;
  /**
   * The reporting frequency asked of sellers when a buy does not say (default daily), and
   * whether governed buys carry our reporting webhook (default) or are polled
   * (src/engine/media-buys/reporting-choice.ts).
   */
  reporting?: { frequency?: ReportingFrequency; governed_buys?: GovernedReporting };
}

export interface StoredSettings {
  settings: TenantSettings;
  updated_at: number | null;
  updated_by: string | null;
}

export class SettingsRepo {
  /** forTenantIn runs with every report a buy takes: compiled once (src/store/compiled.ts). */
  private readonly compiled: CompiledQueries;

  constructor(private readonly db: Db) {
    this.compiled = new CompiledQueries(db.direct);
  }

  async get(tenantId: string): Promise<StoredSettings> {
    const row = await this.db.kysely.selectFrom('tenant_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    if (!row) return { settings: {}, updated_at: null, updated_by: null };
    return { settings: JSON.parse(row.settings) as TenantSettings, updated_at: row.updated_at, updated_by: row.updated_by };
  }

  /**
   * The settings of the tenant an operation belongs to, read on `conn` (a write
   * transaction in progress may pass its own: one statement, no other await).
   */
  async forOperation(operationId: string, conn: Tx = this.db.kysely): Promise<TenantSettings> {
    const row = await conn
      .selectFrom('tenant_settings')
      .select('settings')
      .where('tenant_id', '=', (eb) => eb.selectFrom('operations').select('tenant_id').where('id', '=', operationId))
      .executeTakeFirst();
    return row ? (JSON.parse(row.settings) as TenantSettings) : {};
  }

  /** A tenant's settings read on `conn` (a write transaction in progress may pass its own). */
  async forTenantIn(tenantId: string, conn: Tx = this.db.kysely): Promise<TenantSettings> {
    const { rows } = await this.compiled.execute(conn, 'forTenant', [tenantId], ([t]) => conn.selectFrom('tenant_settings').select('settings').where('tenant_id', '=', t));
    const row = rows[0];
    return row ? (JSON.parse(row.settings) as TenantSettings) : {};
  }

  /** Replaces the tenant's settings as a whole (PUT semantics). */
  async put(tenantId: string, settings: TenantSettings, actor: string, now = Date.now()): Promise<StoredSettings> {
    const values = { tenant_id: tenantId, settings: JSON.stringify(settings), updated_at: now, updated_by: actor };
    await this.db.kysely
      .insertInto('tenant_settings')
      .values(values)
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ settings: values.settings, updated_at: now, updated_by: actor }))
      .execute();
    return { settings, updated_at: now, updated_by: actor };
  }
}
