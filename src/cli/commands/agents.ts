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
      .option('--token <token>', "bearer token for the agent (stored encrypted); '-' reads it from standard input, default ADCP_ORCH_AGENT_TOKEN")
      .option('--jwks-uri <url>', "the agent's webhook signing keys"),
  ).action(async (o) => {
    const token = await agentToken(o.token);
    const agent = await callApi(apiTarget(o), 'POST', '/v1/agents', {
      name: o.name,
      role: o.role,
      url: o.agentUrl,
      protocol: o.protocol,
      ...(token ? { auth: { scheme: 'bearer', token } } : {}),
      ...(o.jwksUri ? { webhook_signing: { jwks_uri: o.jwksUri } } : {}),
    });
    process.stdout.write(`${JSON.stringify(agent, null, 2)}\n`);
  });
  apiOptions(agents.command('list').description('list agents')).action(async (o) => {
    const { agents: rows } = await callApi<{ agents: Array<Record<string, string>> }>(apiTarget(o), 'GET', '/v1/agents');
    for (const a of rows) process.stdout.write(`${a.id}  ${a.role.padEnd(10)} ${a.protocol}  ${a.name}  ${a.url}\n`);
  });
}

/**
 * A token given on the command line is visible to every local user (ps,
 * /proc/<pid>/cmdline) and kept in shell history; from standard input or the
 * environment it is not.
 */
async function agentToken(option: string | undefined): Promise<string | undefined> {
  if (option !== '-') return option ?? (process.env.ADCP_ORCH_AGENT_TOKEN || undefined);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const token = Buffer.concat(chunks).toString('utf8').trim();
  if (!token) throw new Error('--token -: nothing on standard input');
  return token;
}
