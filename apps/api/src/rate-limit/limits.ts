import { Throttle } from '@nestjs/throttler';
import { trackByGate, trackByIp, trackBySiteToken } from './trackers';

const MINUTE = 60_000;

/** The spec's limits table; everything not named here gets the default, 100/min per credential. */
export const DEFAULT_LIMIT = { limit: 100, ttl: MINUTE };
export const LimitPerIp = (limit: number) => Throttle({ default: { limit, ttl: MINUTE, getTracker: trackByIp } });
export const LimitPerSiteToken = (limit: number) => Throttle({ default: { limit, ttl: MINUTE, getTracker: trackBySiteToken } });
export const LimitPerGate = (limit: number) => Throttle({ default: { limit, ttl: MINUTE, getTracker: trackByGate } });
