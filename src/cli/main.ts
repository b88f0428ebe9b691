/**
 * `adcp-orchestrator` command line (DESIGN.md §6). Each command lives in its own
 * file under commands/; this file only wires them to commander.
 */
import { Command } from 'commander';
import { registerAgentCommands } from './commands/agents.js';
import { registerKeysCommand } from './commands/keys.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerOpsCommands } from './commands/ops.js';
import { registerReconcileCommand } from './commands/reconcile.js';
import { registerServeCommand } from './commands/serve.js';

const program = new Command()
  .name('adcp-orchestrator')
  .description('Buyer-side AdCP orchestrator: durable operations, verified webhooks, polling and reconciliation')
  .showHelpAfterError();

registerServeCommand(program);
registerMigrateCommand(program);
registerKeysCommand(program);
registerAgentCommands(program);
registerOpsCommands(program);
registerReconcileCommand(program);

program.parseAsync(process.argv).catch((err) => {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
