/** `adcp-orchestrator agents add|list`, through the HTTP API of a running orchestrator. */
import type { Command } from 'commander';
import { apiOptions, apiTarget, callApi, type ApiCommandOptions } from '../api-client.js';
import { printJson } from '../operation-view.js';

interface AgentView {
  id: string;
  name: string;
  role: string;
  protocol: string;
  url: string;
  adcp_version?: string;
  capabilities_error?: string | null;
}

const agentLine = (a: AgentView) =>
  `${a.id}  ${a.role.padEnd(10)} ${a.protocol}  AdCP ${a.adcp_version ?? '3.0'}  ${a.name}  ${a.url}\n${a.capabilities_error ? `  capabilities: ${a.capabilities_error}\n` : ''}`;

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
  ).action(async (o: ApiCommandOptions & { name: string; agentUrl: string; role: string; protocol: string; token?: string; jwksUri?: string }) => {
    const token = await agentToken(o.token);
    const agent = await callApi<AgentView>(apiTarget(o), 'POST', '/v1/agents', {
      name: o.name,
      role: o.role,
      url: o.agentUrl,
      protocol: o.protocol,
      ...(token ? { auth: { scheme: 'bearer', token } } : {}),
      ...(o.jwksUri ? { webhook_signing: { jwks_uri: o.jwksUri } } : {}),
    });
    if (o.json) return printJson(agent);
    process.stdout.write(agentLine(agent));
  });
  apiOptions(agents.command('list').description('list agents')).action(async (o: ApiCommandOptions) => {
    const res = await callApi<{ agents: AgentView[] }>(apiTarget(o), 'GET', '/v1/agents');
    if (o.json) return printJson(res);
    for (const a of res.agents) process.stdout.write(agentLine(a));
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
