/**
 * Ajv's errors as issues a person can act on: a JSON pointer to the field and
 * what is wrong with it. Pure.
 *
 * With every error reported, a failed `oneOf` (AdCP's unions: an account by id
 * or by brand and operator, a budget or a proposal, …) also reports why each of
 * its branches failed, most of them beside the point. Of a union's branches the
 * one the request evidently meant is kept (no discriminator against it, then the
 * fewest problems), the others dropped; innermost unions first.
 */
import type { ErrorObject } from 'ajv';

export interface SchemaIssue {
  /** JSON pointer into the request, e.g. `/reporting_webhook/authentication`. */
  pointer: string;
  message: string;
  keyword: string;
}

const UNIONS: ReadonlySet<string> = new Set(['oneOf', 'anyOf']);

export function issuesOf(errors: readonly ErrorObject[]): SchemaIssue[] {
  const seen = new Set<string>();
  const issues: SchemaIssue[] = [];
  for (const e of keptErrors(errors)) {
    const issue = readable(e);
    const key = `${issue.pointer}\0${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

/** The errors worth reporting, in Ajv's order: of each failed union, only the branch the request meant. */
export function keptErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const kept = new Set(errors);
  const unions = errors.filter((e) => UNIONS.has(e.keyword)).sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  for (const union of unions) {
    if (!kept.has(union)) continue;
    const branches = branchErrors(union, [...kept]);
    if (branches.size === 0) continue;
    const chosen = chooseBranch(branches);
    for (const [index, branch] of branches) if (index !== chosen) for (const e of branch) kept.delete(e);
    if ((branches.get(chosen) ?? []).length > 0) kept.delete(union);
  }
  return errors.filter((e) => kept.has(e));
}

/** The errors under each branch of `union`, by branch index. */
function branchErrors(union: ErrorObject, errors: readonly ErrorObject[]): Map<number, ErrorObject[]> {
  const prefix = `${union.schemaPath}/`;
  const branches = new Map<number, ErrorObject[]>();
  for (const e of errors) {
    if (e === union || !e.schemaPath.startsWith(prefix)) continue;
    if (e.instancePath !== union.instancePath && !e.instancePath.startsWith(`${union.instancePath}/`)) continue;
    const index = Number.parseInt(e.schemaPath.slice(prefix.length), 10);
    if (Number.isNaN(index)) continue;
    const list = branches.get(index) ?? [];
    list.push(e);
    branches.set(index, list);
  }
  return branches;
}

/** A branch whose discriminator (`const`) the request contradicts was not meant; then the fewest problems. */
function chooseBranch(branches: Map<number, ErrorObject[]>): number {
  const ranked = [...branches.entries()].sort(([ia, a], [ib, b]) => {
    const ca = a.some((e) => e.keyword === 'const') ? 1 : 0;
    const cb = b.some((e) => e.keyword === 'const') ? 1 : 0;
    return ca - cb || a.length - b.length || ia - ib;
  });
  return ranked[0]![0];
}

function readable(e: ErrorObject): SchemaIssue {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { pointer: `${e.instancePath}/${escape(String(params.missingProperty))}`, message: 'is required', keyword: e.keyword };
    case 'additionalProperties':
      return { pointer: `${e.instancePath}/${escape(String(params.additionalProperty))}`, message: 'is not a field the schema allows here', keyword: e.keyword };
    case 'enum':
      return { pointer: e.instancePath || '/', message: `must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`, keyword: e.keyword };
    case 'oneOf':
    case 'anyOf':
      return {
        pointer: e.instancePath || '/',
        message: params.passingSchemas ? 'matches more than one of its allowed forms' : 'matches none of its allowed forms',
        keyword: e.keyword,
      };
    default:
      return { pointer: e.instancePath || '/', message: e.message ?? e.keyword, keyword: e.keyword };
  }
}

/** A property name as a JSON pointer segment (RFC 6901). */
function escape(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
