/**
 * A browser-less client of the dashboard for HTTP-level tests: keeps cookies,
 * reads CSRF tokens out of pages, posts forms the way a browser does.
 */
export interface DashboardResponse {
  status: number;
  headers: Headers;
  text: string;
}

export class DashboardClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: string, path: string, opts: { form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<DashboardResponse> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        ...(this.cookies.size ? { cookie: this.cookieHeader() } : {}),
        ...(opts.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...opts.headers,
      },
      body: opts.form ? new URLSearchParams(opts.form).toString() : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const maxAge = attrs.map((a) => a.trim()).find((a) => a.toLowerCase().startsWith('max-age='));
      if (value === '' || maxAge === 'Max-Age=0') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request('GET', path, { headers });
  }

  post(path: string, form: Record<string, string>, headers?: Record<string, string>) {
    return this.request('POST', path, { form, headers });
  }

  /** Signs in through the form; returns the sign-in response (303 on success). */
  async signIn(apiKey: string): Promise<DashboardResponse> {
    const page = await this.get('/login');
    return this.post('/login', { _csrf: csrfIn(page.text), api_key: apiKey });
  }
}

/** The CSRF token of the first form in a page. */
export function csrfIn(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token in the page');
  return m[1]!;
}
