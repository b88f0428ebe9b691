/** The agents page: every seller and governance agent of the tenant, how it is reached, and a way to its operations. */
import type { AgentCapabilities } from '../../adcp/capabilities.js';
import type { AgentRow } from '../../store/index.js';
import { when } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { sellerRegistration } from '../../domain/governance-sync.js';

function signing(a: AgentRow): string {
  if (!a.webhook_signing) return 'none';
  try {
    const s = JSON.parse(a.webhook_signing) as Record<string, unknown>;
    if (s.jwks_uri) return 'RFC 9421 (JWKS URL)';
    if (s.jwks) return 'RFC 9421 (JWKS given)';
    if (s.brand_json_url) return 'RFC 9421 (brand.json)';
  } catch {
    /* shown as configured */
  }
  return 'configured';
}

/** The AdCP version we speak with it, and what it declared (or why nothing it declared was taken). */
function adcp(a: AgentRow, now: number): SafeHtml {
  const version = a.adcp_version ?? '3.0';
  if (a.capabilities_fetched_at == null) return html`${version}<br><span class="muted small">not asked yet</span>`;
  if (a.capabilities_error) return html`${version}<br><span class="warn-text small" title="${a.capabilities_error}">${a.capabilities ? 'last ask failed' : 'declares nothing we take'}</span>`;
  const caps = JSON.parse(a.capabilities ?? 'null') as AgentCapabilities | null;
  const idem = caps?.adcp.idempotency;
  const replay = idem == null ? 'replay: undeclared' : idem.supported ? `replay ${Math.round(idem.replay_ttl_seconds / 3600)} h` : 'no replay';
  return html`${version}<br><span class="muted small" title="asked ${when(a.capabilities_fetched_at, now)}">${(caps?.adcp.supported_versions ?? caps?.adcp.major_versions.map(String) ?? []).join(', ')} · ${replay}</span>`;
}

/** Its token; a governance agent's seller credentials too, and whether sellers can be told of it (sync_governance). */
function credentials(a: AgentRow): SafeHtml {
  const token = a.auth_token_enc ? 'bearer (set)' : 'none';
  if (a.role !== 'governance') return html`${token}`;
  const warn = !a.seller_credentials_enc || !a.url.startsWith('https://');
  return html`${token}<br><span class="${warn ? 'warn-text' : 'muted'} small" title="${sellerRegistration(a)}">seller credentials: ${a.seller_credentials_enc ? 'set' : 'none'}${warn ? ' · not registered with sellers' : ''}</span>`;
}

export function agentsPage(agents: AgentRow[], now: number): SafeHtml {
  const body =
    agents.length === 0
      ? html`<p class="empty">No agents yet. Register one with <code>POST /v1/agents</code> or <code>adcp-orchestrator agents add</code>.</p>`
      : html`<div class="table-wrap"><table class="agents">
  <caption class="visually-hidden">Agents</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Protocol</th><th scope="col">AdCP</th><th scope="col" class="hide-narrow">URL</th><th scope="col" class="hide-narrow">Webhook signing</th><th scope="col" class="hide-narrow">Token</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Links</span></th></tr></thead>
  <tbody>${agents.map(
    (a) => html`<tr data-agent-id="${a.id}">
    <td><strong>${a.name}</strong><br><code class="muted small">${a.id}</code></td>
    <td>${a.role}</td>
    <td>${a.protocol.toUpperCase()}</td>
    <td class="nowrap">${adcp(a, now)}</td>
    <td class="hide-narrow"><code class="wrap">${a.url}</code></td>
    <td class="hide-narrow">${signing(a)}</td>
    <td class="hide-narrow">${credentials(a)}</td>
    <td class="nowrap">${when(a.created_at, now)}</td>
    <td><a href="/operations?agent=${encodeURIComponent(a.id)}">Operations</a></td>
  </tr>`,
  )}</tbody>
</table></div>`;
  return html`<div class="page-head"><h1>Agents</h1></div>${body}`;
}
