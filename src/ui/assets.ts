/**
 * GET /assets/*: the stylesheet and script of src/ui/assets/, and htmx with its SSE
 * extension straight from node_modules, so there is nothing to build. Read once at
 * start; an ETag lets browsers revalidate cheaply.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const require = createRequire(import.meta.url);
const own = (name: string) => new URL(`./assets/${name}`, import.meta.url);

function load(path: string | URL, type: string): Asset {
  const body = readFileSync(path);
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export function assetRoutes(app: FastifyInstance): void {
  const assets = new Map<string, Asset>([
    ['dashboard.css', load(own('dashboard.css'), 'text/css; charset=utf-8')],
    ['media-buys.css', load(own('media-buys.css'), 'text/css; charset=utf-8')],
    ['dashboard.js', load(own('dashboard.js'), 'text/javascript; charset=utf-8')],
    ['htmx.min.js', load(require.resolve('htmx.org/dist/htmx.min.js'), 'text/javascript; charset=utf-8')],
    ['htmx-sse.min.js', load(require.resolve('htmx-ext-sse/dist/sse.min.js'), 'text/javascript; charset=utf-8')],
  ]);
  app.get('/assets/:name', async (req, reply) => {
    const asset = assets.get((req.params as { name: string }).name);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
    reply.header('etag', asset.etag).header('cache-control', 'no-cache');
    if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.type(asset.type).send(asset.body);
  });
}
