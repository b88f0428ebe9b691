/**
 * Comparing two MCP request bodies byte for byte. The only part a resend may
 * change is the JSON-RPC request id, a counter of the client's connection that
 * the MCP client serializes last; everything else, the AdCP arguments included,
 * must be the same bytes.
 */
export function withoutRpcId(body: string): string {
  const blanked = body.replace(/"id":\d+(?=}$)/, '"id":_');
  if (blanked === body) throw new Error(`no trailing JSON-RPC id in …${body.slice(-80)}`);
  return blanked;
}
