/** `adcp-orchestrator keys create --tenant NAME`: mint an API key; the key alone is the last line of output. */
import type { Command } from 'commander';
import { openStore } from '../../store/index.js';
import { configOrExit } from '../load-config.js';

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create an API key for a tenant (created if new); prints the key once')
    .requiredOption('--tenant <name>', 'tenant name')
    .option('--db <url>', 'database URL')
    .action(async (opts: { tenant: string; db?: string }) => {
      const config = configOrExit(opts.db ? { ADCP_ORCH_DATABASE_URL: opts.db } : {});
      const store = await openStore(config.ADCP_ORCH_DATABASE_URL);
      try {
        const tenant = await store.tenants.ensureTenant(opts.tenant);
        const key = await store.tenants.createApiKey(tenant.id);
        process.stderr.write(`API key for tenant "${tenant.name}" (shown once, stored hashed):\n`);
        process.stdout.write(`${key}\n`);
      } finally {
        await store.close();
      }
    });
}
