/** The frame of every page: head, the top bar with navigation and who is signed in, and the main region. */
import type { RequestAuth } from '../../api/auth.js';
import { html, type SafeHtml } from '../html.js';

export type Section = 'operations' | 'inbox' | 'media-buys' | 'campaigns' | 'agents' | 'subscriptions';

export interface PageContext {
  auth: RequestAuth;
  csrf: string;
  /** How many operations wait for a person, shown beside "Inbox". */
  waiting: number;
  /** Which sections exist in this build (campaigns and subscriptions come with their features). */
  sections: readonly Section[];
}

const LABELS: Record<Section, string> = {
  operations: 'Operations',
  inbox: 'Inbox',
  'media-buys': 'Media buys',
  campaigns: 'Campaigns',
  agents: 'Agents',
  subscriptions: 'Subscriptions',
};

/**
 * htmx settings: no eval and no inline script or style it would inject, so the
 * Content-Security-Policy can forbid both.
 */
const HTMX_CONFIG = '{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0}';

/** The number beside "Inbox"; live refreshes replace it out of band (hx-swap-oob) so it stays current. */
export function inboxCount(waiting: number, outOfBand = false): SafeHtml {
  const oob = outOfBand ? html` hx-swap-oob="true"` : '';
  if (waiting === 0) return html`<span id="inbox-count" class="count"${oob}></span>`;
  return html`<span id="inbox-count" class="count"${oob}><span class="visually-hidden">(</span>${waiting}<span class="visually-hidden"> waiting)</span></span>`;
}

export function documentShell(title: string, body: SafeHtml): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content="${HTMX_CONFIG}">
<title>${title} · adcp-orchestrator</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/dashboard.css">
<link rel="stylesheet" href="/assets/media-buys.css">
<script src="/assets/htmx.min.js" defer></script>
<script src="/assets/htmx-sse.min.js" defer></script>
<script src="/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
${body}
</body>
</html>
`;
}

export interface LayoutOptions {
  title: string;
  section: Section;
  /** Session-authenticated SSE stream this page refreshes from. */
  live?: string;
  body: SafeHtml;
}

export function layout(ctx: PageContext, opts: LayoutOptions): string {
  const nav = ctx.sections.map((s) => {
    const current = s === opts.section;
    const count = s === 'inbox' ? inboxCount(ctx.waiting) : '';
    return html`<a href="/${s}"${current ? html` aria-current="page"` : ''}>${LABELS[s]}${count}</a>`;
  });
  const { auth } = ctx;
  const page = html`<header class="topbar">
  <a class="brand" href="/operations">adcp<span>orchestrator</span></a>
  <nav class="mainnav" aria-label="Main">${nav}</nav>
  <div class="who">
    <span class="who-name" title="tenant ${auth.tenantName}">${auth.keyName}</span>
    <span class="role role-${auth.role}">${auth.role}</span>
    <form method="post" action="/logout" class="inline">
      <input type="hidden" name="_csrf" value="${ctx.csrf}">
      <button type="submit" class="link-button">Sign out</button>
    </form>
  </div>
</header>
<main id="main"${opts.live ? html` hx-ext="sse" sse-connect="${opts.live}"` : ''}>
${opts.body}
</main>`;
  return documentShell(opts.title, page).value;
}
