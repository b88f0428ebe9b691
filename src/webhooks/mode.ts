/**
 * Which authentication mode a delivery *presents*. The mode to verify is
 * fixed at registration (AdCP spec, webhooks: "mode is a switch", never a fallback);
 * this only lets a verifier tell "signed the other way" (webhook_mode_mismatch,
 * worth an alarm) apart from "not signed properly" (its own codes).
 */
import { hasHeader, singleHeader, type HeaderBag } from './headers.js';

export type PresentedMode = 'rfc9421' | 'hmac' | 'bearer';

export function presentedModes(headers: HeaderBag): Set<PresentedMode> {
  const modes = new Set<PresentedMode>();
  if (hasHeader(headers, 'signature-input') || hasHeader(headers, 'signature')) modes.add('rfc9421');
  if (hasHeader(headers, 'x-adcp-signature')) modes.add('hmac');
  const auth = singleHeader(headers, 'authorization');
  if (typeof auth === 'string' && /^bearer\s/i.test(auth)) modes.add('bearer');
  return modes;
}

/** True when the delivery carries none of `expected`'s headers but another mode's. */
export function isModeMismatch(headers: HeaderBag, expected: PresentedMode): boolean {
  const modes = presentedModes(headers);
  return !modes.has(expected) && modes.size > 0;
}
