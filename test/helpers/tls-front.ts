/**
 * An https front on loopback for an http agent, so a test can register the agent
 * at an `https://` URL (AdCP wants https wherever a seller is told of an agent:
 * sync_governance's `url`). It passes each request on whole and its answer back.
 *
 * The certificate is the tests' own (test/fixtures/tls): `trustLoopbackCertificate()`
 * makes this process's fetch (the orchestrator's calls, when it runs in the test
 * process) trust it, until the function it returns is called.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { forwardTo } from './proxy-forward.js';
import { readBody } from './request-body.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));
const CERT = fixture('loopback-cert.pem');

export interface TlsFront {
  /** e.g. https://127.0.0.1:40123 */
  origin: string;
  close(): Promise<void>;
}

export async function startTlsFront(target: string): Promise<TlsFront> {
  const server: Server = createServer({ key: fixture('loopback-key.pem'), cert: CERT }, (req, res) => {
    readBody(req)
      .then((body) => forwardTo(target, req, body))
      .then((answer) => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** This process's fetch trusts the loopback certificate (and only it, for TLS); returns the undo. */
export function trustLoopbackCertificate(): () => void {
  const before = getGlobalDispatcher();
  setGlobalDispatcher(new Agent({ connect: { ca: CERT } }));
  return () => setGlobalDispatcher(before);
}
