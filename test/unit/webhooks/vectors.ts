/** Loading the AdCP conformance vectors copied under test/fixtures/adcp-vectors. */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WebhookJwk } from '../../../src/adcp/webhook-signature.js';

export const VECTORS_DIR = fileURLToPath(new URL('../../fixtures/adcp-vectors/', import.meta.url));

export function readVectorFile<T = any>(relative: string): T {
  return JSON.parse(readFileSync(join(VECTORS_DIR, relative), 'utf8')) as T;
}

/** Every JSON file in a vectors subfolder, as [file name, parsed content], sorted by name. */
export function readVectorDir<T = any>(relative: string): Array<[string, T]> {
  const dir = join(VECTORS_DIR, relative);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8')) as T]);
}

/** One RFC 9421 webhook-signing vector (webhook-signing/positive and negative). */
export interface SigningVector {
  name: string;
  reference_now: number;
  request: { method: string; url: string; headers: Record<string, string>; body: string };
  jwks_ref: string[];
  jwks_override?: Record<string, WebhookJwk>;
  expected_outcome: { success: boolean; error_code?: string };
  test_harness_state?: {
    replay_cache_entries?: Array<{ keyid: string; nonce: string }>;
    revoked_kids?: string[];
    per_keyid_cap_filled_for?: string;
    revocation_list_stale_seconds?: number;
  };
}

