/**
 * A PostgreSQL cluster of a test's own, in a temp directory on a free port, that the
 * test may stop and start at will (a database outage) without touching the shared
 * server other tests use. initdb refuses to run as root, so as root the cluster is
 * made and run by the `postgres` system user.
 *
 * Like every PostgreSQL test, these run when TEST_DATABASE_URL is set or REQUIRE_POSTGRES=1
 * (`privatePostgresEnabled`), and need the server binaries besides: where they are not
 * installed a suite skips, unless REQUIRE_POSTGRES=1 makes their absence a failure.
 */
import { execFileSync, execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';

const run = promisify(execFile);

function findBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  // The newest installed major version with a server.
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const dir = join(root, v, 'bin');
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  return undefined;
}

const isRoot = userInfo().uid === 0;

function postgresUser(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/** Where initdb and pg_ctl are, when this machine can run a private cluster. */
export const privatePostgresBinDir: string | undefined = (() => {
  const dir = findBinDir();
  if (!dir) return undefined;
  if (isRoot && !postgresUser()) return undefined;
  return dir;
})();

if (process.env.REQUIRE_POSTGRES === '1' && !privatePostgresBinDir) {
  throw new Error('REQUIRE_POSTGRES=1 but no PostgreSQL server binaries (initdb, pg_ctl) are installed under /usr/lib/postgresql');
}

/** Whether suites on a private cluster run here (see above). */
export const privatePostgresEnabled = Boolean(privatePostgresBinDir && (process.env.TEST_DATABASE_URL || process.env.REQUIRE_POSTGRES === '1'));

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** Stops the server: `fast` ends every session at once (what a restart or failover does to us). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /**
   * Freezes every process of the server (SIGSTOP): connections stay open and new ones are
   * accepted by the kernel, but nothing answers, as with a hung host or a network black hole.
   */
  freeze(): Promise<void>;
  /** Lets a frozen server go on (SIGCONT). */
  thaw(): Promise<void>;
  /** Stops it (if running) and deletes its files. */
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = privatePostgresBinDir;
  if (!bin) throw new Error('no PostgreSQL server binaries');
  const dir = mkdtempSync(join(tmpdir(), 'orch-pg-'));
  const data = join(dir, 'data');
  const owner = isRoot ? postgresUser() : undefined;
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const as = (cmd: string, args: string[]) => (owner ? run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]) : run(join(bin, cmd), args));

  await as('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
  const port = await freePort();
  // Sockets in our own directory, TCP on loopback only: nothing shared with the machine's server.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=60 -c shared_buffers=16MB`;
  const pgCtl = (args: string[]) => as('pg_ctl', ['-D', data, ...args]);
  const start = async () => {
    await pgCtl(['-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  };
  let running = false;
  // The postmaster (first line of postmaster.pid) and its children: every backend, the checkpointer, the WAL writer…
  // read from /proc rather than from a `pgrep` whose failure was swallowed: in one CI run every
  // backend kept answering through a "freeze".
  const postmasterPid = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = (postmaster: number): number[] => {
    const found: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        // stat: "pid (comm) state ppid ...", comm may hold spaces and parentheses: read after the last ')'.
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) found.push(Number(entry));
      } catch {
        /* ended meanwhile */
      }
    }
    if (found.length === 0) throw new Error(`PostgreSQL postmaster ${postmaster} has no child processes to signal`);
    return found;
  };
  const kill = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      /* ended meanwhile */
    }
  };
  // The postmaster is stopped first, so that it forks no backend after its children are listed:
  // another CI run had a connection opened during the freeze answer through it.
  const freeze = async () => {
    const postmaster = postmasterPid();
    kill(postmaster, 'SIGSTOP');
    for (const pid of children(postmaster)) kill(pid, 'SIGSTOP');
  };
  // Children first, the postmaster last, the reverse of the freeze.
  const thaw = async () => {
    const postmaster = postmasterPid();
    for (const pid of children(postmaster)) kill(pid, 'SIGCONT');
    kill(postmaster, 'SIGCONT');
  };
  await start();
  running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop(mode = 'fast') {
      await pgCtl(['-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    freeze,
    thaw,
    async destroy() {
      await thaw().catch(() => undefined);
      if (running) await pgCtl(['-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
