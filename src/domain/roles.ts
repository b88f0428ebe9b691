/**
 * API-key roles (README.md, Using it "Keys and roles"). Each role includes every one
 * before it: a viewer reads; an operator also creates and cancels operations,
 * syncs plans, runs campaigns and reconciles; an approver also answers what an
 * operation waits for; an admin also manages agents, keys and subscriptions.
 */
export const ROLES = ['viewer', 'operator', 'approver', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/**
 * Whether a key holding `have` may do what needs `need`. A stored role this
 * version does not know (written by a newer one, or by hand) grants nothing:
 * failing closed is the only safe reading of a permission we cannot interpret.
 */
export function roleAtLeast(have: string, need: Role): boolean {
  return isRole(have) && ROLES.indexOf(have) >= ROLES.indexOf(need);
}

/** Key names are the actor recorded in events: short, printable, on one line. */
export const KEY_NAME_MAX = 100;

/** Why `name` cannot be a key name, or undefined when it can. */
export function keyNameProblem(name: string): string | undefined {
  if (name.trim() !== name || name === '') return 'must be non-empty, without leading or trailing spaces';
  if (name.length > KEY_NAME_MAX) return `must be at most ${KEY_NAME_MAX} characters`;
  // Control characters would let a name forge extra lines in logs and CLI listings.
  if (/\p{Cc}/u.test(name)) return 'must not contain control characters';
  return undefined;
}
