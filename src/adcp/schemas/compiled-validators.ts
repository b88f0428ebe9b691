/**
 * Compiled validators, one per (schema set, schema), made once per
 * installation: requests (src/adcp/request-schema.ts) and responses
 * (response-schema.ts, with the root relaxed as the SDK relaxes it).
 *
 * Ajv with the options the SDK's own validator uses (not strict about
 * unknown keywords, every error reported, union types, string formats), so a
 * request we pass is one an SDK-built agent passes. Compiling a request schema
 * of the AdCP tree takes from 0.1 to 0.8 s of one core (create_media_buy
 * reaches half of the tree), too long to pay in every process on its first
 * call: the compiled code is kept on disk (Ajv's standalone code, under
 * node_modules/.cache) and loaded from there, in milliseconds, by every later
 * process. A cache that cannot be written (a read-only install) only costs the
 * compile; a damaged one is compiled again.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import standaloneCodeModule from 'ajv/dist/standalone/index.js';
import { fileOf, type SchemaSet } from './schema-sets.js';

export type CompiledValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

const require = createRequire(import.meta.url);
// Both packages are CommonJS with the function as `default`.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => void;
const standaloneCode = ((standaloneCodeModule as unknown as { default?: unknown }).default ?? standaloneCodeModule) as (ajv: Ajv, refs: Record<string, string>) => string;

const AJV_VERSION = (require('ajv/package.json') as { version: string }).version;
const CACHE_DIR = join(dirname(dirname(require.resolve('ajv/package.json'))), '.cache', 'adcp-orchestrator', 'request-validators');

const compiled = new Map<string, CompiledValidator>();

export interface ValidatorOptions {
  /** Compile the schema with its root relaxed (`relaxedRoot`): how a response is checked. */
  relaxedRoot?: boolean;
}

/** The validator of `schemaId` in `set`: from memory, else from the disk cache, else compiled (and cached). */
export function validatorFor(set: SchemaSet, schemaId: string, opts: ValidatorOptions = {}): CompiledValidator {
  const variant = opts.relaxedRoot ? 'relaxed' : '';
  const key = `${set.release}\0${schemaId}\0${variant}`;
  const known = compiled.get(key);
  if (known) return known;
  const file = cacheFile(set, schemaId, variant);
  const validator = loadCached(file) ?? compileAndCache(set, schemaId, file, opts.relaxedRoot === true);
  compiled.set(key, validator);
  return validator;
}

function cacheFile(set: SchemaSet, schemaId: string, variant: string): string {
  // The release names the schemas (a release's schemas never change; the same whether read from
  // src/ or dist/); Ajv's version, the code it generates. A strict compile keeps its old name.
  const digest = createHash('sha256')
    .update(`${AJV_VERSION}\0${set.release}\0${schemaId}${variant ? `\0${variant}` : ''}`)
    .digest('hex')
    .slice(0, 24);
  return join(CACHE_DIR, `${digest}.cjs`);
}

/**
 * The SDK's rule for response schemas (`relaxResponseRoot` in its schema loader): the
 * root, and each branch of its root unions, takes properties it does not list, so the
 * protocol envelope's fields (`status`, `adcp_version`, `replayed`, …) sit beside a
 * task's body wherever a task schema closes its root; everything below the root stays
 * as strict as written.
 */
export function relaxedRoot(schema: Record<string, unknown>): Record<string, unknown> {
  const open = (node: Record<string, unknown>): Record<string, unknown> =>
    node.additionalProperties === false ? { ...node, additionalProperties: true } : { ...node };
  const root = open(schema);
  for (const key of ['oneOf', 'anyOf', 'allOf']) {
    const branches = root[key];
    if (!Array.isArray(branches)) continue;
    root[key] = branches.map((b: unknown) => (b !== null && typeof b === 'object' && !Array.isArray(b) ? open(b as Record<string, unknown>) : b));
  }
  return root;
}

function loadCached(file: string): CompiledValidator | null {
  try {
    const loaded = require(file) as { default?: CompiledValidator };
    return typeof loaded.default === 'function' ? loaded.default : null;
  } catch {
    return null;
  }
}

function compileAndCache(set: SchemaSet, schemaId: string, file: string, relaxRoot: boolean): CompiledValidator {
  const ajv = new Ajv({ strict: false, allErrors: true, allowUnionTypes: true, code: { source: true } });
  addFormats(ajv);
  const schemas = reachableSchemas(set, schemaId);
  // The first is `schemaId` itself.
  if (relaxRoot) schemas[0] = relaxedRoot(schemas[0]!);
  for (const schema of schemas) ajv.addSchema(schema);
  const validate = ajv.getSchema(schemaId) as ValidateFunction | undefined;
  if (!validate) throw new Error(`no schema ${schemaId} in AdCP ${set.release}`);
  try {
    // Written whole, then renamed: another process never loads half a file.
    mkdirSync(CACHE_DIR, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, standaloneCode(ajv, { default: schemaId }));
    renameSync(temporary, file);
  } catch {
    // Not cached (read-only install): this process keeps its compiled copy.
  }
  return validate;
}

/** `schemaId` and every schema it refers to, directly or not, read from the set's files. */
function reachableSchemas(set: SchemaSet, schemaId: string): Array<Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>();
  const pending = [schemaId];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (found.has(id)) continue;
    const path = fileOf(set, id);
    if (!path) throw new Error(`schema ${id} is outside AdCP ${set.release}`);
    const schema = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    found.set(id, schema);
    for (const ref of refsIn(schema)) {
      if (ref.startsWith('#')) continue;
      // A reference is a URL, a path (`/schemas/<release>/…`) or relative to the referring schema,
      // and names its schema as that schema's `$id` does: resolved against the referrer, kept in its form.
      const base = /^https?:/.test(id) ? id : `https://adcp.invalid${id}`;
      const url = new URL(ref, base);
      url.hash = '';
      const target = url.origin === 'https://adcp.invalid' ? url.pathname : url.href;
      if (!found.has(target)) pending.push(target);
    }
  }
  return [...found.values()];
}

function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const item of node) refsIn(item, out);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push(value);
      else refsIn(value, out);
    }
  }
  return out;
}
