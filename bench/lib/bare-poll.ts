/**
 * The bare poll the poll benches measure against (bench/poll-dispatch.ts, its floor and
 * bare baseline; bench/poll-client-cost.ts): one MCP JSON-RPC `tools/call` of
 * `get_task_status` over node:http on a keep-alive agent, the reply read and parsed,
 * nothing else. One definition, so that every bench compares against the same thing.
 */
import http from 'node:http';

let rpcId = 0;

/** The request body of one poll of `taskId`. */
export function taskStatusBody(taskId: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name: 'get_task_status', arguments: { task_id: taskId, include_result: true } } });
}

export class BarePoller {
  private readonly target: URL;
  private readonly agent = new http.Agent({ keepAlive: true });

  constructor(url: string) {
    this.target = new URL(url);
  }

  /** One poll of `taskId`: the parsed JSON-RPC reply. */
  poll<T = unknown>(taskId: string): Promise<T> {
    const body = taskStatusBody(taskId);
    return new Promise((resolve, reject) => {
      const req = http.request(
        this.target,
        { method: 'POST', agent: this.agent, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T);
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
