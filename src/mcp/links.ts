/**
 * Links into the dashboard that tool results give a model to pass on, where a person
 * must act: the same pages notifications link to (ADCP_ORCH_PUBLIC_URL), or, when no
 * public URL is set, this server's own address.
 */
export class DashboardLinks {
  constructor(private readonly base: () => string) {}

  operation(id: string): string {
    return `${this.root()}/operations/${encodeURIComponent(id)}`;
  }

  inbox(): string {
    return `${this.root()}/inbox`;
  }

  campaign(id: string): string {
    return `${this.root()}/campaigns/${encodeURIComponent(id)}`;
  }

  mediaBuy(id: string): string {
    return `${this.root()}/media-buys/${encodeURIComponent(id)}`;
  }

  private root(): string {
    return this.base().replace(/\/+$/, '');
  }
}
