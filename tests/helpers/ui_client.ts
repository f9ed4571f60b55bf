import type { Hono } from 'hono';

/** A cookie-keeping client for the UI, calling the app in-process like a browser without JavaScript. */
export interface UiClient {
  cookies: Map<string, string>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** Posts a form; `_csrf` is taken from the last page seen unless given (or `null` to send none). */
  post(
    path: string,
    fields: Record<string, string | string[]>,
    options?: { csrf?: string | null; headers?: Record<string, string> },
  ): Promise<Response>;
  /** Posts a multipart form (files as Blobs or Files); `_csrf` as for post. */
  postMultipart(
    path: string,
    fields: Record<string, string | string[] | Blob>,
    options?: { csrf?: string | null; headers?: Record<string, string> },
  ): Promise<Response>;
  /** The CSRF token in the last HTML page this client fetched. */
  csrf(): string | undefined;
  /** Signs in (GET /ui/login for the form token, then POST); returns the POST response. */
  login(email: string, password: string, headers?: Record<string, string>): Promise<Response>;
}

/** A client of `app` (env: what a real server would pass, e.g. the socket address for client IPs). */
export function createUiClient(app: Hono<never>, env: Record<string, unknown> = {}): UiClient {
  const cookies = new Map<string, string>();
  let lastHtml = '';

  function remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /max-age=0/i.test(a) || /expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
  }
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');

  async function send(path: string, init: RequestInit & { headers: Record<string, string> }) {
    const res = await app.request(
      path,
      { ...init, headers: { ...(cookies.size ? { Cookie: cookieHeader() } : {}), ...init.headers } },
      env as never,
    );
    remember(res);
    if ((res.headers.get('Content-Type') ?? '').startsWith('text/html')) lastHtml = await res.clone().text();
    return res;
  }

  const client: UiClient = {
    cookies,
    get: (path, headers = {}) => send(path, { method: 'GET', headers }),
    post(path, fields, options = {}) {
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) form.append(k, one);
      const token = options.csrf === undefined ? client.csrf() : options.csrf;
      if (token !== null && token !== undefined && !('_csrf' in fields)) form.set('_csrf', token);
      return send(path, {
        method: 'POST',
        body: form.toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...options.headers },
      });
    },
    postMultipart(path, fields, options = {}) {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) {
        if (v instanceof Blob) form.append(k, v, v instanceof File ? v.name : `${k}.bin`);
        else for (const one of [v].flat()) form.append(k, one);
      }
      const token = options.csrf === undefined ? client.csrf() : options.csrf;
      if (token !== null && token !== undefined && !('_csrf' in fields)) form.set('_csrf', token);
      // The body is serialised here so the request carries a Content-Length, as a browser's form post does.
      const request = new Request('http://form.invalid/', { method: 'POST', body: form });
      return request.arrayBuffer().then((body) =>
        send(path, {
          method: 'POST',
          body,
          headers: { 'Content-Type': request.headers.get('Content-Type')!, ...options.headers },
        }),
      );
    },
    csrf: () => /name="_csrf" value="([^"]+)"/.exec(lastHtml)?.[1],
    async login(email, password, headers = {}) {
      await client.get('/ui/login', headers);
      return client.post('/ui/login', { email, password }, { headers });
    },
  };
  return client;
}
