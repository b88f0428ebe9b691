/** A page that only says something (refused, expired, not found), with one way on. */
import { html, type SafeHtml } from '../html.js';
import { documentShell } from './layout.js';

export interface MessagePage {
  title: string;
  message: string;
  link?: { href: string; text: string };
}

export function messagePage(m: MessagePage): string {
  const body: SafeHtml = html`<main id="main" class="narrow">
    <div class="panel message" role="alert">
      <h1>${m.title}</h1>
      <p>${m.message}</p>
      ${m.link ? html`<p><a class="button" href="${m.link.href}">${m.link.text}</a></p>` : ''}
    </div>
  </main>`;
  return documentShell(m.title, body).value;
}
