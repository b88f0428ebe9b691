/**
 * `adcp-orchestrator` command line (README.md, Command line). Each command group lives in its
 * own file under commands/; this file only wires them to commander and turns a
 * failure into one line on standard error and an exit code (2 for bad usage,
 * 1 otherwise), never a stack trace.
 */
import { Command, CommanderError } from 'commander';
import { errorLine, exitAfterFlush, exitCodeFor } from './cli-errors.js';
import { registerAgentCommands } from './commands/agents.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerCampaignCommands } from './commands/campaigns.js';
import { registerKeysCommand } from './commands/keys.js';
import { registerMcpCommand } from './commands/mcp.js';
import { registerMediaBuyCommands } from './commands/media-buys.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerOpsCommands } from './commands/ops.js';
import { registerReconcileCommand } from './commands/reconcile.js';
import { registerServeCommand } from './commands/serve.js';
import { registerSigningKeysCommand } from './commands/signing-keys.js';
import { registerSubscriptionCommands } from './commands/subscriptions.js';

const program = new Command()
  .name('adcp-orchestrator')
  .description('Buyer-side AdCP orchestrator: durable operations, verified webhooks, polling and reconciliation')
  .showHelpAfterError()
  // Commander has printed its message (unknown option, missing argument…): bad usage is exit code 2.
  // Set before the commands are added, which inherit it.
  .exitOverride((err: CommanderError) => {
    process.exit(err.exitCode === 0 ? 0 : 2);
  });

registerServeCommand(program);
registerMigrateCommand(program);
registerKeysCommand(program);
registerSigningKeysCommand(program);
registerAgentCommands(program);
registerOpsCommands(program);
registerSubscriptionCommands(program);
registerReconcileCommand(program);
registerDemoCommand(program);
registerCampaignCommands(program);
registerMediaBuyCommands(program);
registerMcpCommand(program);

program.parseAsync(process.argv).catch(async (err: unknown) => {
  process.stderr.write(errorLine(err));
  await exitAfterFlush(exitCodeFor(err));
});
