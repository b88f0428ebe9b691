/** `adcp-orchestrator migrate [--db URL]`: apply schema migrations and exit. */
import type { Command } from 'commander';
import { configOrExit } from '../load-config.js';

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply database migrations (also done at every start)')
    .option('--db <url>', 'database URL (default ADCP_ORCH_DATABASE_URL or sqlite:./data/orchestrator.db)')
    .action(async (opts: { db?: string }) => {
      const config = configOrExit(opts.db ? { ADCP_ORCH_DATABASE_URL: opts.db } : {});
      // Loaded only for this command: the store is slow to load and other commands do not need it.
      const { openDb } = await import('../../store/db.js');
      const { migrateToLatest } = await import('../../store/migrate.js');
      const db = openDb(config.ADCP_ORCH_DATABASE_URL);
      try {
        const applied = await migrateToLatest(db);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : `${db.describe} is up to date\n`);
      } finally {
        await db.close();
      }
    });
}
