/**
 * The request-signing key kept outside the database: ADCP_ORCH_SIGNING_KEY_FILE names a
 * file holding an Ed25519 private key (PKCS#8 PEM or a private JWK), e.g. mounted from a
 * secret store. Read once at start; a file that is missing, unreadable or holds anything
 * but an Ed25519 private key stops `serve` with a message naming the variable and what
 * is wrong (never the key). The key itself never enters the database: its public half is
 * published, like a generated key's (src/engine/signing-keys.ts).
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from './config.js';
import { materialFromKeyFile, type SigningKeyMaterial } from './adcp/signing-key-material.js';

export function loadSigningKeyFile(path: string | undefined): SigningKeyMaterial | undefined {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : (code ?? String(err));
    throw new ConfigError([`ADCP_ORCH_SIGNING_KEY_FILE: cannot read ${path}: ${why}`]);
  }
  try {
    return materialFromKeyFile(text);
  } catch (err) {
    throw new ConfigError([`ADCP_ORCH_SIGNING_KEY_FILE: ${path} ${(err as Error).message}; it must hold an Ed25519 private key (openssl genpkey -algorithm ed25519)`]);
  }
}
