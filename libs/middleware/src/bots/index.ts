export type { BotAction, BotCategory, BotPolicy, BotSignature, Visitor } from './types';
export { BOT_CATALOGUE } from './catalogue';
export {
  anySignerWarning,
  botPolicyProblems,
  DEFAULT_CATEGORY_ACTIONS,
  UNKNOWN_AUTOMATION,
  UNKNOWN_CRAWLER,
} from './policy';
export { classifyVisitor } from './classify';
export { ALWAYS_FREE_PATHS, isAlwaysFreePath, isAlwaysFreeRoute, isFreeRequestPath } from './free-paths';
