/**
 * The dashboard's one way to make HTML: a tagged template that escapes every
 * interpolated value unless it is already SafeHtml (the result of another `html`
 * template, or `raw` of text we wrote ourselves). Agent replies, request bodies and
 * key names all reach pages, so escaping is the default and opting out is explicit.
 */

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escapes text for an element body or a double-quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

/** Interpolated value: SafeHtml as is, arrays joined, nothing for null/undefined/false, anything else escaped. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Marks text we wrote ourselves as HTML. Never pass it anything that came from a request or an agent. */
export function raw(trusted: string): SafeHtml {
  return new SafeHtml(trusted);
}

/** A query string built from the given pairs (empty values left out), for links that keep filters. */
export function queryString(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}
