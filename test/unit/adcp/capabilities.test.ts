/**
 * What an agent declares of itself, read and checked, and the dialect we speak with
 * it as a result: the highest release both speak, 3.0 for one that declares nothing
 * or nothing we trust; the version pin and task tools that follow.
 */
import { describe, expect, it } from 'vitest';
import { readCapabilities, type AgentCapabilities } from '../../../src/adcp/capabilities.js';
import { chooseDialect, DIALECT_3_0, withVersionPin } from '../../../src/adcp/dialect.js';
import { chooseTaskTool } from '../../../src/adcp/client.js';

const AT = new Date('2026-12-08T00:00:00Z');

function caps(adcp: Record<string, unknown>, extra: Record<string, unknown> = {}): AgentCapabilities {
  const read = readCapabilities({ adcp, supported_protocols: ['media_buy'], ...extra }, AT);
  if ('error' in read) throw new Error(read.error);
  return read.capabilities;
}

describe('readCapabilities', () => {
  it('keeps what we act on, as the agent JSON shows it', () => {
    const read = readCapabilities(
      {
        adcp: { major_versions: [3], supported_versions: ['3.0', '3.1'], idempotency: { supported: true, replay_ttl_seconds: 86400 } },
        supported_protocols: ['media_buy'],
        request_signing: { supported: true, required_for: ['create_media_buy'], covers_content_digest: 'required' },
        media_buy: { governance_aware: true },
        library_version: 'whatever',
      },
      AT,
    );
    expect(read).toEqual({
      capabilities: {
        fetched_at: '2026-12-08T00:00:00.000Z',
        adcp: { major_versions: [3], supported_versions: ['3.0', '3.1'], idempotency: { supported: true, replay_ttl_seconds: 86400 } },
        request_signing: { supported: true, required_for: ['create_media_buy'], covers_content_digest: 'required' },
        webhook_signing: null,
        media_buy: { governance_aware: true },
        governance: null,
        protocols: ['media_buy'],
      },
    });
  });

  it('refuses a declaration it cannot trust, saying what is wrong', () => {
    const refused = (body: Record<string, unknown>) => (readCapabilities(body, AT) as { error?: string }).error;
    expect(refused({ adcp: { major_versions: [3], idempotency: { supported: true, replay_ttl_seconds: -5 } } })).toMatch(/^capabilities refused: adcp\.idempotency/);
    expect(refused({ adcp: { major_versions: [3], idempotency: { supported: true, replay_ttl_seconds: 9_999_999 } } })).toMatch(/adcp\.idempotency/);
    expect(refused({ adcp: { major_versions: [3], supported_versions: ['3.1.2'] } })).toMatch(/adcp\.supported_versions\.0 is not a release/);
    expect(refused({ adcp: { major_versions: ['three'] } })).toMatch(/adcp\.major_versions\.0/);
    expect(refused({ adcp: { major_versions: [3] }, request_signing: { required_for: 'create_media_buy' } })).toMatch(/request_signing\.required_for/);
    expect(refused({})).toMatch(/^capabilities refused: adcp/);
    // Not declaring idempotency is allowed, and kept as undeclared (the spec: unsafe for retries).
    expect(caps({ major_versions: [3] }).adcp.idempotency).toBeNull();
  });
});

describe('chooseDialect', () => {
  it('speaks 3.0, unpinned, to an agent that declares nothing', () => {
    expect(chooseDialect(null)).toEqual({ dialect: DIALECT_3_0 });
  });

  it('speaks 3.0 with the major pin to an agent that lists major versions only', () => {
    expect(chooseDialect(caps({ major_versions: [3] }))).toEqual({ dialect: { ...DIALECT_3_0, pinMajor: true } });
  });

  it('speaks the highest release both speak, with its task tools', () => {
    expect(chooseDialect(caps({ major_versions: [3], supported_versions: ['3.0', '3.1'] })).dialect).toEqual({
      version: '3.1',
      release: '3.1',
      pinMajor: true,
      pollTool: 'get_task_status',
      listTool: 'list_tasks',
    });
    expect(chooseDialect(caps({ major_versions: [3], supported_versions: ['3.0', '3.1', '3.2-beta.5'] })).dialect).toMatchObject({ version: '3.2', release: '3.2-beta.5' });
    // A pre-release matches exactly: 3.2 final or another beta is not the 3.2 we speak.
    expect(chooseDialect(caps({ major_versions: [3], supported_versions: ['3.1', '3.2'] })).dialect.version).toBe('3.1');
    expect(chooseDialect(caps({ major_versions: [3], supported_versions: ['3.0'] })).dialect).toEqual({ ...DIALECT_3_0, pinMajor: true });
  });

  it('falls back to 3.0, saying why, when no release is shared', () => {
    const { dialect, problem } = chooseDialect(caps({ major_versions: [4], supported_versions: ['4.0'] }));
    expect(dialect).toEqual(DIALECT_3_0);
    expect(problem).toMatch(/speaks 4\.0; we speak 3\.2-beta\.5, 3\.1, 3\.0/);
  });
});

describe('withVersionPin', () => {
  it('pins the major (and the release where the agent lists releases), keeping a pin the caller set', () => {
    const v31 = chooseDialect(caps({ major_versions: [3], supported_versions: ['3.0', '3.1'] })).dialect;
    expect(withVersionPin({ a: 1 }, v31)).toEqual({ a: 1, adcp_major_version: 3, adcp_version: '3.1' });
    expect(withVersionPin({ a: 1 }, chooseDialect(caps({ major_versions: [3] })).dialect)).toEqual({ a: 1, adcp_major_version: 3 });
    expect(withVersionPin({ a: 1 }, DIALECT_3_0)).toEqual({ a: 1 });
    const own = { adcp_major_version: 3, adcp_version: '3.0' };
    expect(withVersionPin(own, v31)).toBe(own);
  });
});

describe('chooseTaskTool', () => {
  it("calls the dialect's tool, else the other name when only that is listed, never one the agent does not list", () => {
    expect(chooseTaskTool('get_task_status', 'tasks/get', new Set(['get_task_status', 'tasks/get']))).toBe('get_task_status');
    expect(chooseTaskTool('get_task_status', 'tasks/get', new Set(['tasks/get', 'create_media_buy']))).toBe('tasks/get');
    expect(chooseTaskTool('tasks/get', 'get_task_status', new Set(['create_media_buy']))).toBeNull();
    // Tools that could not be listed rule nothing out.
    expect(chooseTaskTool('tasks/list', 'list_tasks', null)).toBe('tasks/list');
  });
});
