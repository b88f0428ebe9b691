/**
 * `adcp-orchestrator keys create|list`, straight on the database (keys are how one
 * reaches the API, so making the first one cannot need the API).
 * `create` prints the new key alone on the last line of standard output; `list`
 * shows names, roles, prefixes and creation times, never a key.
 */
import type { Command } from 'commander';
import { isRole, keyNameProblem, ROLES, type Role } from '../../domain/roles.js';
import type { Store } from '../../store/index.js';
import { configOrExit } from '../load-config.js';

/** Bad input on the command line: a clear message and exit code 2, before anything is touched. */
function usageError(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}

async function withStore<T>(db: string | undefined, run: (store: Store) => Promise<T>): Promise<T> {
  const config = configOrExit(db ? { ADCP_ORCH_DATABASE_URL: db } : {});
  // Loaded here, not at the top: the store is slow to load, and the commands that talk to the API do not need it.
  const { openStore } = await import('../../store/index.js');
  const store = await openStore(config.ADCP_ORCH_DATABASE_URL);
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create an API key for a tenant (created if new); prints the key once, on the last line')
    .requiredOption('--tenant <name>', 'tenant name')
    .option('--name <name>', 'who or what uses the key, recorded as the actor of what it does (default key-<prefix>)')
    .option('--role <role>', `${ROLES.join(' < ')}; each role can do what the ones before it can`, 'admin')
    .option('--json', 'print JSON (with the key in it) instead of the key alone')
    .option('--db <url>', 'database URL')
    .action(async (opts: { tenant: string; name?: string; role: string; json?: boolean; db?: string }) => {
      if (!isRole(opts.role)) usageError(`--role must be one of ${ROLES.join(', ')} (got '${opts.role}')`);
      const role: Role = opts.role;
      const nameProblem = opts.name === undefined ? undefined : keyNameProblem(opts.name);
      if (nameProblem) usageError(`--name ${nameProblem}`);
      await withStore(opts.db, async (store) => {
        const tenant = await store.tenants.ensureTenant(opts.tenant);
        let created;
        try {
          created = await store.tenants.addApiKey(tenant.id, { name: opts.name, role });
        } catch (err) {
          const { KeyNameTakenError } = await import('../../store/tenants-repo.js');
          if (err instanceof KeyNameTakenError) usageError(`tenant "${tenant.name}" already has a key named '${err.keyName}'; choose another --name`);
          throw err;
        }
        process.stderr.write(`API key '${created.info.name}' (${created.info.role}) for tenant "${tenant.name}" (shown once, stored hashed):\n`);
        if (opts.json) {
          const { id, name, role: keyRole, prefix, created_at } = created.info;
          process.stdout.write(`${JSON.stringify({ tenant: tenant.name, id, name, role: keyRole, prefix, created_at: new Date(created_at).toISOString(), key: created.key }, null, 2)}\n`);
          return;
        }
        process.stdout.write(`${created.key}\n`);
      });
    });

  keys
    .command('list')
    .description("list a tenant's keys: prefix, role, created, name (never the key itself)")
    .requiredOption('--tenant <name>', 'tenant name')
    .option('--json', 'print JSON')
    .option('--db <url>', 'database URL')
    .action(async (opts: { tenant: string; json?: boolean; db?: string }) => {
      await withStore(opts.db, async (store) => {
        const tenant = await store.tenants.findTenant(opts.tenant);
        if (!tenant) usageError(`no tenant named "${opts.tenant}"`);
        const rows = (await store.tenants.listApiKeys(tenant.id)).map((k) => ({
          id: k.id,
          name: k.name,
          role: k.role,
          prefix: k.prefix,
          created_at: new Date(k.created_at).toISOString(),
        }));
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ tenant: tenant.name, keys: rows }, null, 2)}\n`);
          return;
        }
        // The name last: it is free text and may hold spaces.
        for (const k of rows) process.stdout.write(`${`${k.prefix}…`.padEnd(10)} ${k.role.padEnd(9)} ${k.created_at}  ${k.name}\n`);
      });
    });
}
