/** The result shape every webhook authentication check in this folder returns. */
export type AuthResult<Ok extends object = object> =
  | ({ ok: true } & Ok)
  | {
      ok: false;
      /** A `webhook_*` code, suitable for `WWW-Authenticate: Signature error="<code>"`. */
      code: string;
      message: string;
      /** True when the failure is ours (a dependency), so the route should answer 503, not 401. */
      transient?: boolean;
    };
