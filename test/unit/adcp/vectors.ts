/**
 * Loads the AdCP conformance vectors with JSON.parse (not an import), so that a
 * `"__proto__"` key stays an own property exactly as a seller's reply would.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../../fixtures/adcp-vectors/', import.meta.url));

export interface VectorFile<V> {
  version: number;
  description: string;
  vectors: V[];
}

export function loadVectors<V>(name: string): V[] {
  const file = JSON.parse(readFileSync(DIR + name, 'utf8')) as VectorFile<V>;
  if (!Array.isArray(file.vectors) || file.vectors.length === 0) throw new Error(`${name} has no vectors`);
  return file.vectors;
}
