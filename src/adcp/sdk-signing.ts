/**
 * The SDK's signing code, loaded on first use, not at start: it takes seconds to
 * load, and a process that never receives an RFC 9421 webhook should not pay that
 * before it can serve and poll. Shared by the verifier, key sources and revocation.
 */
export type SigningModule = typeof import('@adcp/sdk/signing/server');
let signingModule: Promise<SigningModule> | undefined;

export function signing(): Promise<SigningModule> {
  signingModule ??= import('@adcp/sdk/signing/server');
  return signingModule;
}

export function secondsClock(nowMs: () => number): () => number {
  return () => Math.floor(nowMs() / 1000);
}
