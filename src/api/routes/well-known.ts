/**
 * Who we are, for sellers that verify our signed requests (README, Signed requests):
 *
 * - `GET /.well-known/jwks.json`: our request-signing public keys (the current one, a
 *   rotated one not yet signing, replaced ones within their grace), each exactly
 *   `{kty, crv, x, kid, alg, use, key_ops, adcp_use}`: never a private member.
 * - `GET /.well-known/brand.json`: one `agents[]` entry for this orchestrator, a buying
 *   agent (`type: "buying"`, the spec's enum for an agent that executes media buying),
 *   `url` our public URL, `jwks_uri` the JWKS above, which is how a seller resolves our
 *   keys (security.mdx, "Agent key publication").
 *
 * No authentication on either, as the spec requires; both are cacheable (a seller that
 * meets a kid it does not know refetches at once, so a rotation is seen without waiting
 * for max-age). Served from the keys held in memory, read again at most every 10 s, so
 * an anonymous caller cannot make us read the database per request.
 */
import type { FastifyInstance } from 'fastify';
import type { SigningKeys } from '../../engine/signing-keys.js';

export const JWKS_PATH = '/.well-known/jwks.json';
export const BRAND_JSON_PATH = '/.well-known/brand.json';

/** The id of our `agents[]` entry (brand.json ids are `^[a-z0-9_]+$`). */
export const BRAND_AGENT_ID = 'adcp_orchestrator';

export interface WellKnownDeps {
  keys: SigningKeys;
  /** ADCP_ORCH_PUBLIC_URL; without it the request's own origin is used (a sandbox, a test). */
  publicUrl: string | undefined;
}

export function brandJson(publicUrl: string): Record<string, unknown> {
  return {
    $schema: 'https://adcontextprotocol.org/schemas/v3/brand.json',
    version: '1.0',
    agents: [
      {
        type: 'buying',
        id: BRAND_AGENT_ID,
        url: publicUrl,
        jwks_uri: `${publicUrl}${JWKS_PATH}`,
        description: 'adcp-orchestrator: buys media from AdCP sellers and signs its requests (RFC 9421, AdCP request-signing profile)',
      },
    ],
  };
}

export function wellKnownRoutes(deps: WellKnownDeps) {
  return async (app: FastifyInstance) => {
    app.get(JWKS_PATH, { schema: { hide: true } }, async (_req, reply) => {
      const jwks = await deps.keys.jwks();
      reply.header('cache-control', 'public, max-age=300');
      reply.type('application/jwk-set+json');
      return JSON.stringify(jwks);
    });
    app.get(BRAND_JSON_PATH, { schema: { hide: true } }, async (req, reply) => {
      const base = deps.publicUrl ?? `${req.protocol}://${req.headers.host ?? 'localhost'}`;
      reply.header('cache-control', 'public, max-age=3600');
      return brandJson(base);
    });
  };
}
