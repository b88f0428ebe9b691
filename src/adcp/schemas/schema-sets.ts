/**
 * Where the AdCP JSON Schemas of each version we speak are, and which request
 * and response schemas belong to which task.
 *
 * 3.0 is the 3.0.6 set the pinned SDK ships (its flat tree: schemas that refer
 * to each other by `$id`, not the `bundled/` copies with every reference
 * inlined, which compile several times slower); 3.1 and 3.2 are the spec's
 * 3.1.19 and 3.2.0-beta.5, copied into `data/` (its README says from where). A
 * set is read from its spec `index.json` (`schemas.<domain>.tasks.<task>.request.$ref`, `.response.$ref`);
 * the task tools that sit outside the index (`tasks/get`, `tasks/list`) are added here.
 * A schema's `$id` is `/schemas/<release>/<path>` (3.0, 3.1) or that path under
 * `https://adcontextprotocol.org` (3.2): either way its path names its file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SchemaSet {
  /** The AdCP release the set is, e.g. `3.0.6`. */
  release: string;
  /** The directory holding `index.json` and the domain folders. */
  root: string;
  /** The `$id` prefix of every schema in the set: `/schemas/<release>/`. */
  idPrefix: string;
  /** Task name (as called on the wire) → the `$id` of its request schema. */
  requests: ReadonlyMap<string, string>;
  /** Task name → the `$id` of its (synchronous) response schema. */
  responses: ReadonlyMap<string, string>;
}

const require = createRequire(import.meta.url);

/** The versions we can check requests for, by the version we speak with an agent. */
const ROOTS: Readonly<Record<string, () => string>> = {
  '3.0': () => join(dirname(require.resolve('@adcp/sdk/package.json')), 'dist/lib/schemas-data/3.0'),
  '3.1': () => fileURLToPath(new URL('./data/3.1.19', import.meta.url)),
  '3.2': () => fileURLToPath(new URL('./data/3.2.0-beta.5', import.meta.url)),
};

/** Task tools of the 3.0 line that the spec index does not list (they live in `core/`). */
const CORE_TASK_TOOLS: ReadonlyArray<[string, string, string]> = [
  ['tasks/get', 'core/tasks-get-request.json', 'core/tasks-get-response.json'],
  ['tasks/list', 'core/tasks-list-request.json', 'core/tasks-list-response.json'],
];

const sets = new Map<string, SchemaSet | null>();

export function knownVersions(): string[] {
  return Object.keys(ROOTS);
}

/** The schema set for `version` (`3.0`, …), or null when we have none for it. */
export function schemaSet(version: string): SchemaSet | null {
  if (sets.has(version)) return sets.get(version)!;
  const rootOf = ROOTS[version];
  const set = rootOf ? readSet(rootOf()) : null;
  sets.set(version, set);
  return set;
}

function readSet(root: string): SchemaSet {
  const index = JSON.parse(readFileSync(join(root, 'index.json'), 'utf8')) as {
    adcp_version?: string;
    version?: string;
    schemas: Record<string, { tasks?: Record<string, { request?: { $ref?: string }; response?: { $ref?: string } }> }>;
  };
  const release = String(index.adcp_version ?? index.version);
  const idPrefix = `/schemas/${release}/`;
  const requests = new Map<string, string>();
  const responses = new Map<string, string>();
  for (const domain of Object.values(index.schemas)) {
    for (const [dashed, pair] of Object.entries(domain.tasks ?? {})) {
      const task = dashed.replace(/-/g, '_');
      // The first domain to name a task is its home (list_creative_formats: media-buy before creative).
      const request = pair.request?.$ref;
      if (typeof request === 'string' && !requests.has(task)) requests.set(task, request);
      const response = pair.response?.$ref;
      if (typeof response === 'string' && !responses.has(task)) responses.set(task, response);
    }
  }
  // Named as the set names its own schemas (a path, or a URL).
  const idOf = (file: string): string => (JSON.parse(readFileSync(join(root, file), 'utf8')) as { $id?: string }).$id ?? idPrefix + file;
  for (const [tool, request, response] of CORE_TASK_TOOLS) {
    if (!requests.has(tool) && existsSync(join(root, request))) requests.set(tool, idOf(request));
    if (!responses.has(tool) && existsSync(join(root, response))) responses.set(tool, idOf(response));
  }
  return { release, root, idPrefix, requests, responses };
}

/** The file of a schema `$id` in its set (its path is `/schemas/<release>/<file>`). */
export function fileOf(set: SchemaSet, id: string): string | null {
  const path = /^https?:/.test(id) ? new URL(id).pathname : id.split('#')[0]!;
  return path.startsWith(set.idPrefix) ? join(set.root, path.slice(set.idPrefix.length)) : null;
}
