/** The sign-in page: one field for an API key. The key is posted, never put in a URL, and never written back. */
import { html } from '../html.js';
import { documentShell } from './layout.js';

export interface LoginView {
  csrf: string;
  next?: string;
  /** A notice above the form: why the person is here, or why the last try failed. */
  notice?: { tone: 'info' | 'error'; text: string };
}

export function loginPage(v: LoginView): string {
  const notice = v.notice
    ? html`<p class="notice notice-${v.notice.tone}" role="${v.notice.tone === 'error' ? 'alert' : 'status'}">${v.notice.text}</p>`
    : '';
  const body = html`<main id="main" class="narrow">
  <div class="panel login">
    <p class="brand brand-large">adcp<span>orchestrator</span></p>
    <h1>Sign in</h1>
    <p class="muted">Sign in with an API key of your tenant. The dashboard then acts with that key’s role, and records its name beside what you do.</p>
    ${notice}
    <form method="post" action="/login" class="stack">
      <input type="hidden" name="_csrf" value="${v.csrf}">
      ${v.next ? html`<input type="hidden" name="next" value="${v.next}">` : ''}
      <label for="api_key">API key</label>
      <input id="api_key" name="api_key" type="password" required autocomplete="off" spellcheck="false" autofocus aria-describedby="api_key_help">
      <p id="api_key_help" class="hint">Printed by <code>npm start</code> or <code>adcp-orchestrator keys create</code>. It is exchanged for a session cookie and not kept in the page.</p>
      <button type="submit" class="primary">Sign in</button>
    </form>
  </div>
</main>`;
  return documentShell('Sign in', body).value;
}
