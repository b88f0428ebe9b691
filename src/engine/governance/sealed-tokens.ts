/**
 * Governance tokens at rest. A governance agent's `governance_context` is a signed token
 * that authorizes one exact spend: a seller accepts the buy on the strength of it, so it is
 * a credential like an agent token. In the operation's governance state it is sealed with
 * the orchestrator's key, the same as agent tokens and webhook secrets. It is opened only
 * where it is sent: to the seller with the buy, and to the governance agent with a re-check
 * or the outcome report.
 *
 * It is sealed where it enters the state (a decision read from the agent's reply). Every
 * other step copies the state as it is, sealed. A token an earlier version stored in clear
 * is taken as it stands.
 */
import type { CheckReading } from '../../domain/governance-decision.js';
import type { GovernedState } from '../../domain/governed-flow.js';
import { SecretBox } from '../../store/secret-box.js';

export class GovernanceTokens {
  constructor(private readonly box: SecretBox) {}

  /** The decision with its token sealed, for the state. */
  sealedReading(reading: CheckReading): CheckReading {
    return 'token' in reading && typeof reading.token === 'string' ? { ...reading, token: this.box.seal(reading.token) } : reading;
  }

  open(stored: string): string {
    return SecretBox.isSealed(stored) ? this.box.open(stored) : stored;
  }

  /** The state as a check request needs it: the lineage token (`continuity`) opened. */
  forCheck(state: GovernedState): GovernedState {
    return state.continuity ? { ...state, continuity: this.open(state.continuity) } : state;
  }

  /** A stored report_plan_outcome request with its `governance_context` opened. */
  openedRequest(request: Record<string, unknown>): Record<string, unknown> {
    const token = request.governance_context;
    return typeof token === 'string' && token ? { ...request, governance_context: this.open(token) } : request;
  }
}
