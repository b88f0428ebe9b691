/**
 * The sandbox seller's `idempotency` option: what its capabilities declare of replay
 * protection is what it does. A seller declaring `{supported: false}` runs a resend
 * under the same key again (a second buy), as the spec says such a seller does; one
 * declaring a window states it and replays within it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSandboxSeller, type SandboxSellerOptions } from '../../src/sandbox/seller.js';

type Body = Record<string, any>;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function sellerWith(opts: SandboxSellerOptions) {
  const seller = await startSandboxSeller(opts);
  cleanups.push(() => seller.close());
  const client = new Client({ name: 'replay-declaration-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(seller.url)));
  cleanups.push(() => client.close());
  const call = async (name: string, args: Body = {}): Promise<Body> =>
    ((await client.callTool({ name, arguments: args })) as { structuredContent?: Body }).structuredContent ?? {};
  return { seller, call };
}

const buy = (key: string): Body => ({
  idempotency_key: key,
  account: { account_id: 'acc_test' },
  brand: { domain: 'example-brand.com' },
  start_time: 'asap',
  end_time: '2030-12-31T23:59:59Z',
  packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_usd_fixed', budget: 5000 }],
});

describe('sandbox seller: the replay protection it declares', () => {
  it('declares {supported: false} and then runs a resend under the same key again', async () => {
    const { seller, call } = await sellerWith({ idempotency: { supported: false } });
    const caps = await call('get_adcp_capabilities', { adcp_major_version: 3 });
    expect(caps.adcp.idempotency).toEqual({ supported: false });
    const key = 'replay-declaration-key-0001';
    const first = await call('create_media_buy', buy(key));
    const second = await call('create_media_buy', buy(key));
    expect(second.replayed).toBeUndefined();
    expect(second.media_buy_id).not.toBe(first.media_buy_id);
    expect(seller.mediaBuys()).toHaveLength(2);
  });

  it('declares the window it is given and replays within it', async () => {
    const { seller, call } = await sellerWith({ idempotency: { supported: true, replay_ttl_seconds: 3600 } });
    const caps = await call('get_adcp_capabilities', { adcp_major_version: 3 });
    expect(caps.adcp.idempotency).toEqual({ supported: true, replay_ttl_seconds: 3600 });
    const key = 'replay-declaration-key-0002';
    const first = await call('create_media_buy', buy(key));
    const second = await call('create_media_buy', buy(key));
    expect(second).toMatchObject({ replayed: true, media_buy_id: first.media_buy_id });
    expect(seller.mediaBuys()).toHaveLength(1);
  });

  it('declares a day by default', async () => {
    const { call } = await sellerWith({});
    const caps = await call('get_adcp_capabilities', { adcp_major_version: 3 });
    expect(caps.adcp.idempotency).toEqual({ supported: true, replay_ttl_seconds: 86400 });
  });
});
