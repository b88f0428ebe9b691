/**
 * `adcp-orchestrator signing-keys list|rotate`, straight on the database like `keys`
 * (README, Signed requests). `list` shows each key's kid, where it comes from, whether
 * it signs, and until when it is published; never key material. `rotate` adds a new key:
 * published at once, signing after ADCP_ORCH_SIGNING_KEY_LEAD_MS (or `--activate-in`),
 * the old one kept in the JWKS for ADCP_ORCH_SIGNING_KEY_GRACE_MS after that. Running
 * instances pick it up within 10 s.
 */
import type { Command } from 'commander';
import type { SigningKeyInfo, SigningKeys } from '../../engine/signing-keys.js';
import { UsageError } from '../cli-errors.js';
import { configOrExit } from '../load-config.js';

async function withKeys<T>(db: string | undefined, run: (keys: SigningKeys) => Promise<T>): Promise<T> {
  const config = configOrExit(db ? { ADCP_ORCH_DATABASE_URL: db } : {});
  // Loaded here: the store and the engine are slow to load, and other commands need neither.
  const [{ openStore }, { SecretBox }, { resolveSecretKey }, { SigningKeys }, { SigningKeysRepo }, { loadSigningKeyFile }, { createLogger }, { systemClock }] = await Promise.all([
    import('../../store/index.js'),
    import('../../store/secret-box.js'),
    import('../../secret-key.js'),
    import('../../engine/signing-keys.js'),
    import('../../store/signing-keys-repo.js'),
    import('../../signing-key-file.js'),
    import('../../logger.js'),
    import('../../engine/clock.js'),
  ]);
  const keyFile = loadSigningKeyFile(config.ADCP_ORCH_SIGNING_KEY_FILE);
  const store = await openStore(config.ADCP_ORCH_DATABASE_URL);
  try {
    const secrets = new SecretBox(resolveSecretKey(config.ADCP_ORCH_SECRET_KEY, config.ADCP_ORCH_DATABASE_URL).key);
    const keys = new SigningKeys({
      repo: new SigningKeysRepo(store.db),
      secrets,
      clock: systemClock,
      log: createLogger('silent'),
      ...(keyFile && { keyFile }),
      graceMs: config.ADCP_ORCH_SIGNING_KEY_GRACE_MS,
      leadMs: config.ADCP_ORCH_SIGNING_KEY_LEAD_MS,
    });
    return await run(keys);
  } finally {
    await store.close();
  }
}

function line(k: SigningKeyInfo): string {
  const until = k.published_until ? `published until ${k.published_until}` : 'published';
  return `${k.kid}  ${k.state.padEnd(7)}  ${k.source.padEnd(9)}  from ${k.activates_at}  ${until}\n`;
}

export function registerSigningKeysCommand(program: Command): void {
  const cmd = program.command('signing-keys').description('our request-signing keys (RFC 9421): list them, rotate them');
  cmd
    .command('list')
    .description('list the keys: kid, state (signing, next, retired), source, since when it signs, until when it is published')
    .option('--json', 'print JSON')
    .option('--db <url>', 'database URL')
    .action(async (opts: { json?: boolean; db?: string }) => {
      await withKeys(opts.db, async (keys) => {
        const list = await keys.list();
        if (opts.json) return void process.stdout.write(`${JSON.stringify({ keys: list }, null, 2)}\n`);
        if (list.length === 0) return void process.stdout.write('no signing key yet: one is made when serve first starts\n');
        for (const k of list) process.stdout.write(line(k));
      });
    });
  cmd
    .command('rotate')
    .description('add a new key: published now, signing after the lead time; the old one stays published for the grace period')
    .option('--activate-in <ms>', 'milliseconds until the new key signs (default ADCP_ORCH_SIGNING_KEY_LEAD_MS, 60000)')
    .option('--json', 'print JSON')
    .option('--db <url>', 'database URL')
    .action(async (opts: { activateIn?: string; json?: boolean; db?: string }) => {
      const lead = opts.activateIn === undefined ? undefined : Number(opts.activateIn);
      if (lead !== undefined && (!Number.isInteger(lead) || lead < 0 || lead > 86_400_000)) {
        throw new UsageError(`--activate-in must be whole milliseconds from 0 to 86400000 (got '${opts.activateIn}')`);
      }
      await withKeys(opts.db, async (keys) => {
        const { SigningKeyFileError } = await import('../../engine/signing-keys.js');
        let rotated;
        try {
          rotated = await keys.rotate(lead);
        } catch (err) {
          if (err instanceof SigningKeyFileError) throw new UsageError(err.message);
          throw err;
        }
        if (opts.json) return void process.stdout.write(`${JSON.stringify(rotated, null, 2)}\n`);
        process.stdout.write(`new key ${rotated.key.kid}: published now, signs from ${rotated.key.activates_at}\n`);
        for (const old of rotated.replaced) process.stdout.write(`replaced ${old.kid}: published until ${old.published_until}\n`);
      });
    });
}
