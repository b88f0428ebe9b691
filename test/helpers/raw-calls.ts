/** Reading the raw MCP request bodies a sandbox seller saw (SandboxSellerOptions.onMcpRequest). */

export interface RawToolCall {
  /** The whole HTTP body, as received. */
  raw: string;
  /** The exact bytes of `params.arguments` inside it. */
  rawArguments: string;
  args: Record<string, any>;
}

/** The `tools/call` requests of tool `name` among raw MCP bodies, in arrival order. */
export function toolCalls(bodies: string[], name: string): RawToolCall[] {
  const out: RawToolCall[] = [];
  for (const raw of bodies) {
    let msg: any;
    try {
      msg = JSON.parse(raw);
    } catch {
      continue;
    }
    if (msg?.method !== 'tools/call' || msg.params?.name !== name) continue;
    out.push({ raw, rawArguments: rawMember(raw, 'arguments'), args: msg.params.arguments });
  }
  return out;
}

/**
 * The source text of the first member called `name` in JSON `text`, its value
 * exactly as it appears (no re-serialisation, which would hide a difference).
 */
export function rawMember(text: string, name: string): string {
  const at = text.indexOf(`${JSON.stringify(name)}:`);
  if (at < 0) throw new Error(`no member ${name}`);
  const start = at + JSON.stringify(name).length + 1;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      if (!inString && depth === 0) return text.slice(start, i + 1);
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) return text.slice(start, i); // a scalar value, ended by its parent
      if (--depth === 0) return text.slice(start, i + 1);
    } else if (c === ',' && depth === 0) return text.slice(start, i);
  }
  throw new Error(`member ${name} is not closed`);
}
