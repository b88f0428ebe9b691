/** How times, durations, statuses and JSON read on the dashboard's pages. */
import { html, type SafeHtml } from './html.js';

/** "45 s", "3 min 12 s", "2 h 5 min", "3 d 4 h": two units at most, enough to read at a glance. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** "2026-03-01 14:05:09 UTC": unambiguous whatever the reader's time zone. */
export function utc(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
}

/** A <time> with the exact moment in its title and "x ago" / "in x" as its text. */
export function when(ms: number | null | undefined, now: number): SafeHtml {
  if (ms === null || ms === undefined) return html`<span class="muted">—</span>`;
  const text = ms <= now ? `${duration(now - ms)} ago` : `in ${duration(ms - now)}`;
  return html`<time datetime="${new Date(ms).toISOString()}" title="${utc(ms)}">${text}</time>`;
}

const STATUS_TONES: Record<string, string> = {
  requested: 'pending',
  calling_adcp: 'pending',
  submitted: 'pending',
  working: 'pending',
  'input-required': 'attention',
  'auth-required': 'attention',
  unknown: 'attention',
  completed: 'good',
  failed: 'bad',
  rejected: 'bad',
  canceled: 'neutral',
};

export function statusBadge(status: string): SafeHtml {
  return html`<span class="badge badge-${STATUS_TONES[status] ?? 'neutral'}" data-status="${status}">${status}</span>`;
}

/** Stored JSON text, indented for reading; text that is not JSON is shown as it is. */
export function prettyJson(text: string | null): string {
  if (text === null) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The first characters of a long id, with the whole id for screen readers and on hover. */
export function shortId(id: string): SafeHtml {
  const short = id.length > 13 ? `${id.slice(0, 8)}…` : id;
  return html`<code title="${id}">${short}</code>`;
}
