/**
 * Every tool the MCP server offers, in the order tools/list shows them. A new tool is a
 * file beside these and one line here.
 */
import type { Tool } from '../tool.js';
import { answerOperation } from './answer-operation.js';
import { cancelOperation } from './cancel-operation.js';
import { createCampaign } from './create-campaign.js';
import { createMediaBuy } from './create-media-buy.js';
import { getCampaign } from './get-campaign.js';
import { getDelivery } from './get-delivery.js';
import { getMediaBuy } from './get-media-buy.js';
import { getOperation } from './get-operation.js';
import { getPlan } from './get-plan.js';
import { listAgents } from './list-agents.js';
import { listInbox } from './list-inbox.js';
import { listMediaBuys } from './list-media-buys.js';
import { listOperations } from './list-operations.js';
import { pauseMediaBuy } from './pause-media-buy.js';
import { refreshMediaBuy } from './refresh-media-buy.js';
import { resumeMediaBuy } from './resume-media-buy.js';
import { runTask } from './run-task.js';
import { syncPlan } from './sync-plan.js';
import { waitForOperation } from './wait-for-operation.js';

export const TOOLS: readonly Tool[] = [
  listAgents,
  createMediaBuy,
  runTask,
  getOperation,
  listOperations,
  waitForOperation,
  listInbox,
  answerOperation,
  cancelOperation,
  syncPlan,
  getPlan,
  createCampaign,
  getCampaign,
  listMediaBuys,
  getMediaBuy,
  getDelivery,
  pauseMediaBuy,
  resumeMediaBuy,
  refreshMediaBuy,
];

export const TOOLS_BY_NAME: ReadonlyMap<string, Tool> = new Map(TOOLS.map((t) => [t.name, t]));
