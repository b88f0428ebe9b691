/** `adcp-orchestrator agents add|list`, through the HTTP API of a running orchestrator. */
import type { Command } from 'commander';
import { apiOptions, apiTarget, callApi } from '../api-client.js';

export function registerAgentCommands(program: Command): void {
  const agents = program.command('agents').description('register and list AdCP agents');
  apiOptions(
    agents
      .command('add')
      .description('register an agent')
      .requiredOption('--name <name>')
      .requiredOption('--agent-url <url>', "the agent's endpoint")
      .option('--role <role>', 'seller | governance', 'seller')
      .option('--protocol <protocol>', 'mcp | a2a', 'mcp')
      .option('--token <token>', 'bearer token for the agent (stored encrypted)')
      .option('--jwks-uri <url>', "the agent's webhook signing keys"),
  ).action(async (o) => {
    const agent = await callApi(apiTarget(o), 'POST', '/v1/agents', {
      name: o.name,
      role: o.role,
      url: o.agentUrl,
      protocol: o.protocol,
      ...(o.token ? { auth: { scheme: 'bearer', token: o.token } } : {}),
      ...(o.jwksUri ? { webhook_signing: { jwks_uri: o.jwksUri } } : {}),
    });
    process.stdout.write(`${JSON.stringify(agent, null, 2)}\n`);
  });
  apiOptions(agents.command('list').description('list agents')).action(async (o) => {
    const { agents: rows } = await callApi<{ agents: Array<Record<string, string>> }>(apiTarget(o), 'GET', '/v1/agents');
    for (const a of rows) process.stdout.write(`${a.id}  ${a.role.padEnd(10)} ${a.protocol}  ${a.name}  ${a.url}\n`);
  });
}
