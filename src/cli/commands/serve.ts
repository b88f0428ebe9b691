/**
 * `adcp-orchestrator serve [--sandbox] [--port N] [--db URL]`.
 * With --sandbox: embedded SQLite under ./data, a sandbox seller and a sandbox
 * governance agent on loopback, registered for a `sandbox` tenant, and a
 * ready-to-paste curl.
 */
import type { Command } from 'commander';
import type { App } from '../../app.js';
import type { Config } from '../../config.js';
import { configOrExit } from '../load-config.js';
import type { SandboxSetup } from '../sandbox-setup.js';

interface ServeOptions {
  sandbox?: boolean;
  port?: string;
  db?: string;
}

/** Sandbox timings: fast enough to watch a media buy go through in a few seconds. */
const SANDBOX_DEFAULTS: Record<string, string> = {
  ADCP_ORCH_POLL_INTERVAL_MS: '2000',
  ADCP_ORCH_BACKUP_POLL_AFTER_MS: '10000',
  ADCP_ORCH_WORKING_TIMEOUT_MS: '5000',
  // The sandbox seller publishes its webhook keys on loopback.
  ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'true',
  // Its compressed flights report periods ahead of the wall clock (a year of flight in a minute).
  ADCP_ORCH_REPORT_CLOCK_SKEW_MS: String(10 * 366 * 86_400_000),
  // Live buys' statuses move every few seconds there: read them as often.
  ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '5000',
  // Its creatives are reviewed in seconds (SANDBOX_CREATIVE_REVIEW_MS, default 2 s): look as often.
  ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '3000',
};

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the orchestrator (API, webhook receiver, scheduler)')
    .option('--sandbox', 'also run sandbox agents on loopback and register them')
    .option('--port <n>', 'HTTP port (default PORT or 8080)')
    .option('--db <url>', 'database URL (default ADCP_ORCH_DATABASE_URL or sqlite:./data/orchestrator.db)')
    .action(async (opts: ServeOptions) => {
      const overrides: Partial<Config> = {};
      if (opts.db) overrides.ADCP_ORCH_DATABASE_URL = opts.db;
      const env = opts.sandbox ? { ...SANDBOX_DEFAULTS, ...process.env } : process.env;
      const portOverride = opts.port ?? env.PORT;
      const config = configOrExit({ ...overrides, ...(opts.port ? { PORT: Number(opts.port) } : {}) }, env);
      if (opts.sandbox && !config.ADCP_ORCH_PUBLIC_URL) {
        // Sandbox agents run on this machine, so they reach our webhooks on loopback.
        config.ADCP_ORCH_PUBLIC_URL = `http://127.0.0.1:${portOverride ?? config.PORT}`;
      }
      await serve(config, Boolean(opts.sandbox));
    });
}

async function serve(config: Config, sandbox: boolean): Promise<void> {
  // Loaded only to serve: the whole service takes seconds to load, which the API commands need not wait for.
  const { createApp } = await import('../../app.js');
  const { createLogger } = await import('../../logger.js');
  const logger = createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT });
  let sandboxSetup: SandboxSetup | undefined;
  let app: App | undefined;
  const shutdown = async (signal: string, exitCode = 0) => {
    logger.info({ signal }, 'shutting down');
    await app?.close().catch((err) => logger.error({ err }, 'close failed'));
    await sandboxSetup?.close().catch(() => undefined);
    process.exit(exitCode);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  try {
    app = await createApp({ config, logger });
  } catch (err) {
    // A bad setting found only when it is used (the signing key file): its message and exit code 2, as for any other.
    const { ConfigError } = await import('../../config.js');
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  // SQLite: another serve took the file over while we were presumed dead (stopped, hung): two must not serve it.
  app.instances.onSuperseded(() => void shutdown('superseded', 1));
  // A refused start (the SQLite file is served by another live process) ends here with its message, exit code 1.
  const baseUrl = await app.listen();
  // The SDK's response schemas (for webhook results), loaded in the background a little
  // after ready: the load blocks the loop once (0.25–1.6 s), better then than in the first
  // webhook's answer, and not while the first claimed work of a restart goes out.
  setTimeout(() => {
    void import('../../adcp/task-result.js').then((m) => m.warmResultSchemas()).catch((err) => logger.warn({ err }, 'loading the SDK response schemas failed'));
  }, 2_000).unref();
  if (sandbox) {
    // Loaded only when asked for: the sandbox agents pull in the SDK's server side.
    const { setUpSandbox } = await import('../sandbox-setup.js');
    sandboxSetup = await setUpSandbox(app, config, baseUrl);
    process.stdout.write(sandboxSetup.banner);
  } else {
    process.stdout.write(`Dashboard: ${baseUrl}/  (sign in with an API key: adcp-orchestrator keys create)\nadcp-orchestrator listening on ${baseUrl}\n`);
  }
}
