/**
 * ADCP_ORCH_SIGNING_KEY_FILE read at start (src/signing-key-file.ts): an Ed25519 private
 * key as PKCS#8 PEM or a private JWK is taken (its kid the key's thumbprint, the same
 * for both forms); a file that is missing, unreadable or holds anything else is a
 * ConfigError naming the variable and what is wrong, never the key's content.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { loadSigningKeyFile } from '../../src/signing-key-file.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-keyfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
};

function refusal(path: string): string {
  try {
    loadSigningKeyFile(path);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('the file was accepted');
}

describe('ADCP_ORCH_SIGNING_KEY_FILE', () => {
  const ed = generateKeyPairSync('ed25519');
  const pem = ed.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const jwk = ed.privateKey.export({ format: 'jwk' });

  it('is optional', () => expect(loadSigningKeyFile(undefined)).toBeUndefined());

  it('takes an Ed25519 private key as PEM or as a JWK, under one kid', () => {
    const fromPem = loadSigningKeyFile(file('key.pem', pem))!;
    const fromJwk = loadSigningKeyFile(file('key.jwk', JSON.stringify(jwk)))!;
    expect(fromPem.kid).toBe(fromJwk.kid);
    expect(fromPem.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fromPem.publicJwk).toEqual({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid: fromPem.kid, alg: 'EdDSA', use: 'sig', key_ops: ['verify'], adcp_use: 'request-signing' });
  });

  it('stops the start with a clear message for a file that is missing, unreadable or not an Ed25519 private key', () => {
    expect(refusal(join(dir, 'nope.pem'))).toMatch(/ADCP_ORCH_SIGNING_KEY_FILE: cannot read .*nope\.pem: no such file/);
    expect(refusal(dir)).toMatch(/cannot read .*: it is a directory/);
    expect(refusal(file('empty', '  \n'))).toMatch(/is empty/);
    expect(refusal(file('junk', 'hello'))).toMatch(/neither a PEM private key nor a JWK/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    expect(refusal(file('rsa.pem', rsa))).toMatch(/holds an rsa key, not an Ed25519 key.*openssl genpkey -algorithm ed25519/);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
    expect(refusal(file('ec.jwk', JSON.stringify(ec)))).toMatch(/kty EC \/ crv P-256, not an Ed25519 key/);
    expect(refusal(file('pub.pem', ed.publicKey.export({ format: 'pem', type: 'spki' }) as string))).toMatch(/holds a public key/);
    expect(refusal(file('pub.jwk', JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: jwk.x })))).toMatch(/public JWK/);
    expect(refusal(file('bad.pem', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'))).toMatch(/cannot be read/);
  });

  it('never puts key material in its message', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
    const message = refusal(file('ec2.jwk', JSON.stringify(ec)));
    expect(message).not.toContain(ec.d!);
    expect(message).not.toContain(ec.x!);
  });
});
