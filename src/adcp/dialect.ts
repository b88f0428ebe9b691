/**
 * The AdCP version we speak with an agent, and what changes with it: which task
 * tools poll and list, the version pin on every request, which JSON Schemas our
 * requests are checked against. Chosen from the agent's declared capabilities
 * (capabilities.ts), never guessed: the highest release both sides speak; 3.0 for
 * an agent that declares nothing (it answered no `get_adcp_capabilities`, or an
 * answer we could not trust), which is how every agent was spoken to before.
 *
 * Pre-releases match exactly (reference/versioning.mdx): we speak 3.2 as its
 * beta 5, so only a seller listing `3.2-beta.5` is spoken to in 3.2.
 */
import type { AgentCapabilities } from './capabilities.js';

export type AdcpVersion = '3.0' | '3.1' | '3.2';

/** The releases we speak, newest first: the release pinned on the wire, the schemas behind it. */
export const OUR_RELEASES: ReadonlyArray<{ release: string; version: AdcpVersion }> = [
  { release: '3.2-beta.5', version: '3.2' },
  { release: '3.1', version: '3.1' },
  { release: '3.0', version: '3.0' },
];

export interface AgentDialect {
  version: AdcpVersion;
  /** The release we pin (`adcp_version`), sent where the agent lists releases; null otherwise. */
  release: string | null;
  /** Whether requests carry `adcp_major_version` (the agent declared the versions it speaks). */
  pinMajor: boolean;
  /** The poll and list tools of this version (the 3.1 names, else the 3.0 ones). */
  pollTool: 'get_task_status' | 'tasks/get';
  listTool: 'list_tasks' | 'tasks/list';
}

export const DIALECT_3_0: AgentDialect = { version: '3.0', release: null, pinMajor: false, pollTool: 'tasks/get', listTool: 'tasks/list' };

/** The dialect for an agent's capabilities (null: none, or none we trust), or why none of ours fits. */
export function chooseDialect(capabilities: AgentCapabilities | null): { dialect: AgentDialect; problem?: string } {
  if (!capabilities) return { dialect: DIALECT_3_0 };
  const { major_versions: majors, supported_versions: releases } = capabilities.adcp;
  if (releases) {
    const shared = OUR_RELEASES.find((r) => releases.includes(r.release));
    if (!shared) {
      return { dialect: DIALECT_3_0, problem: `the agent speaks ${releases.join(', ')}; we speak ${OUR_RELEASES.map((r) => r.release).join(', ')}: spoken to as 3.0` };
    }
    return { dialect: dialectFor(shared.version, shared.release) };
  }
  // Major versions only: a 3.0 agent (3.1 added release-precision supported_versions).
  if (!majors.includes(3)) return { dialect: DIALECT_3_0, problem: `the agent speaks AdCP ${majors.join(', ')}, not 3: spoken to as 3.0` };
  return { dialect: { ...DIALECT_3_0, pinMajor: true } };
}

function dialectFor(version: AdcpVersion, release: string): AgentDialect {
  // A 3.0 request has no `adcp_version` (and some 3.0 requests are closed to unknown fields).
  if (version === '3.0') return { ...DIALECT_3_0, pinMajor: true };
  return { version, release, pinMajor: true, pollTool: 'get_task_status', listTool: 'list_tasks' };
}

/**
 * `params` with the version pin the dialect calls for, when the caller set none:
 * `adcp_major_version` to an agent that declared versions, and `adcp_version` where it
 * lists releases (opt-in through 3.x; a 3.0 agent's closed requests would refuse it).
 */
export function withVersionPin(params: Record<string, unknown>, dialect: AgentDialect): Record<string, unknown> {
  if (!dialect.pinMajor || ('adcp_major_version' in params && (dialect.release === null || 'adcp_version' in params))) return params;
  return {
    ...params,
    ...('adcp_major_version' in params ? {} : { adcp_major_version: Number(dialect.version.split('.')[0]) }),
    ...(dialect.release === null || 'adcp_version' in params ? {} : { adcp_version: dialect.release }),
  };
}

/** The version a pinned release stands for (`3.1` → 3.1, `3.2-beta.5` → 3.2); undefined for one we do not speak. */
export function versionOfRelease(release: string): AdcpVersion | undefined {
  return OUR_RELEASES.find((r) => r.release === release)?.version;
}
