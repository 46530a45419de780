import { Throttle } from '@nestjs/throttler';
import { trackByCredential, trackByGate, trackByIp } from './trackers';

const MINUTE = 60_000;

/** The spec's limits table; everything not named here gets the default, 100/min per credential. */
export const DEFAULT_LIMIT = { limit: 100, ttl: MINUTE };
export const LimitPerIp = (limit: number) => Throttle({ default: { limit, ttl: MINUTE, getTracker: trackByIp } });
/** For routes whose guard checks the site token: counted per site, as any route per its credential. */
export const LimitPerSiteToken = (limit: number) => Throttle({ default: { limit, ttl: MINUTE, getTracker: trackByCredential } });
export const LimitPerGate = (limit: number) => Throttle({ default: { limit, ttl: MINUTE, getTracker: trackByGate } });
