import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { SkipThrottle, Throttle } from '@nestjs/throttler';
import { RATE_LIMIT_EXTENSION, type RateLimitDoc } from '../openapi/standard-answers';
import { trackByCredential, trackByGate, trackByIp, trackBySignInClient, trackBySignInVisitor } from './trackers';

const MINUTE = 60_000;

/** The spec's limits table; everything not named here gets the default, 100/min per credential. */
export const DEFAULT_LIMIT = { limit: 100, ttl: MINUTE };
export const DEFAULT_LIMIT_DOC: RateLimitDoc = {
  limit: DEFAULT_LIMIT.limit,
  window_seconds: MINUTE / 1000,
  per: 'credential',
};

/** Each limit also documents itself on the route (the OpenAPI document's 429 and `x-rate-limit`). */
const limitPer = (per: RateLimitDoc['per'], getTracker: typeof trackByIp) => (limit: number) =>
  applyDecorators(
    Throttle({ default: { limit, ttl: MINUTE, getTracker } }),
    ApiExtension(RATE_LIMIT_EXTENSION, { limit, window_seconds: MINUTE / 1000, per } satisfies RateLimitDoc),
  );

export const LimitPerIp = limitPer('ip', trackByIp);
/** For routes whose guard checks the site token: counted per site, as any route per its credential. */
export const LimitPerSiteToken = limitPer('credential', trackByCredential);
export const LimitPerGate = limitPer('gate', trackByGate);
/**
 * Sign-ins whose signature only the chain can judge (a smart wallet's, or one that does not hold),
 * per site, wallet the proof names and path. Counted before the payment is looked up, whether the
 * wallet paid for the path or not, so a stranger's proofs under a payer's public address are answered
 * as under anyone else's (what a wallet bought is not public); each costs a code read, and only a
 * contract wallet that paid goes on to its isValidSignature. Per path: a smart-wallet crawler signs in on every 402 it
 * meets, and junk aimed at one payer holds off its sign-ins for that page only. An address's own
 * plain signature is recovered locally and never counted (chain/signed-message.ts).
 */
export const SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH = { limit: 10, ttl: MINUTE };
/**
 * The same sign-ins per publisher, across its sites (which cost nothing to add) and wallets: a site
 * token's holder names any visitor and any fresh wallet, each a code read. Counted before the payment
 * is looked up, so a 429 says nothing of any wallet's payments. Past it, until the minute is over,
 * only an address's own plain signatures are answered on that publisher's sites: a flood of junk
 * holds off smart wallets' sign-ins there (the middleware's 503, nothing charged), never an EOA's.
 */
export const SIGN_IN_CHAIN_CHECKS_PER_PUBLISHER = { limit: 600, ttl: MINUTE };
/**
 * Payment-history proofs (X-Wallet-Proof) that ask the chain, per address (an agent signs one for
 * each page of its history), and per client network across the addresses it names (an IPv4 /24, an
 * IPv6 /48: whoever holds a /48 holds 65,536 /64s): each address is the caller's pick, and a
 * stranger's proof for one with code, or a wrapper (ERC-6492) whose factory the stranger picks, is
 * an eth_call. A wallet's own
 * plain signature is recovered locally and never counted; junk aimed at one address holds off that
 * smart wallet's history for the minute, and a client's junk its own proofs.
 */
export const WALLET_PROOF_CHAIN_CHECKS_PER_WALLET = { limit: 30, ttl: MINUTE };
export const WALLET_PROOF_CHAIN_CHECKS_PER_CLIENT = { limit: 60, ttl: MINUTE };
/**
 * EIP-3009 authorizations for a site's gates that the token's simulation refused (junk: one eth_call
 * each), per minute and site. Gates cost nothing to get (every 402 mints one), so the verify route's
 * limit per gate does not bound them; past this one, until the minute is over, only authorizations
 * signed with their payer's own key, by a payer that paid the site's publisher lately, reach the
 * chain for that site (SimulationBudget.assertMaySimulate).
 */
export const REFUSED_SIMULATIONS_PER_SITE = { limit: 100, ttl: MINUTE };
/**
 * The same refusals counted per publisher across all its sites: a publisher registers sites at will
 * (each with its own REFUSED_SIMULATIONS_PER_SITE), so an attacker aiming at sites of its own would
 * otherwise multiply the budget. Past it, every site of that publisher is held off as one site is.
 */
export const REFUSED_SIMULATIONS_PER_PUBLISHER = { limit: 300, ttl: MINUTE };
/**
 * Simulations of authorizations running at once for one site's gates, in this instance. Refusals
 * are counted as they come back, so junk sent all at once would all be on its way to the node before
 * the first was counted. Legit load stays far below: the load bench settles about 40 payments a
 * second on one site, and a simulation takes about 100 ms on a remote node (a handful in flight).
 */
export const SIMULATIONS_IN_FLIGHT_PER_SITE = 32;
/**
 * Simulations running at once for one payer's authorizations, in this instance: without it one payer
 * whose calls the node answers slowly (a smart wallet's signature check burning gas up to the call's
 * cap) could fill a site's slots and turn its other payers away. Twice what a payer may have
 * settled in flight (MAX_PAYER_SETTLEMENTS_IN_FLIGHT): a payer sending more at once than that bound
 * is told to wait by it (503, nothing charged), and half a site's slots stay for its other payers.
 */
export const SIMULATIONS_IN_FLIGHT_PER_PAYER = 16;
/**
 * Sign-ins per site and visitor the middleware names (client_ip), across every wallet its proofs
 * name; per site when it names none. The wallet is the proof's pick (any fresh key), so the
 * per-wallet bucket (LimitPerSignInVisitor) alone let one visitor have the middleware forward
 * sign-ins without end (each a nonce MAC, a payments query, and an API call slot payments share).
 */
export const SIGN_INS_PER_VISITOR = { limit: 300, ttl: MINUTE };
/**
 * Metadata: the route's buckets are finer than its credential (named by the caller), so a request
 * whose credential does not authenticate also counts against its IP, at DEFAULT_LIMIT, as it
 * does on every other route (CredentialThrottlerGuard counts it).
 */
export const UNAUTHENTICATED_PER_IP = 'crawlgate:unauthenticated-per-ip';
/**
 * Metadata: a bucket across the route's finer ones, counted (by CredentialThrottlerGuard) for a
 * credential that authenticates; one that does not counts against the IP (UNAUTHENTICATED_PER_IP).
 */
export const ACROSS_PER_CLIENT = 'crawlgate:across-per-client';
export interface AcrossPerClient {
  limit: number;
  ttl: number;
  getTracker: typeof trackByIp;
}

/** Sign-ins per wallet the proof names and visitor the middleware names, within the site token's credential. */
export const LimitPerSignInVisitor = (limit: number) =>
  applyDecorators(
    Throttle({ default: { limit, ttl: MINUTE, getTracker: trackBySignInVisitor } }),
    SetMetadata(UNAUTHENTICATED_PER_IP, true),
    SetMetadata(ACROSS_PER_CLIENT, {
      ...SIGN_INS_PER_VISITOR,
      getTracker: trackBySignInClient,
    } satisfies AcrossPerClient),
    ApiExtension(RATE_LIMIT_EXTENSION, {
      limit,
      window_seconds: MINUTE / 1000,
      per: 'visitor',
      per_client: SIGN_INS_PER_VISITOR.limit,
    } satisfies RateLimitDoc),
  );
/**
 * X-Confirm-Password checks per publisher, right or wrong, whatever key or address asks: the
 * password guards the payout address against a leaked API key, so that key must not also be a
 * way to guess it (the route's own limit, 100 a minute per key, would allow 144,000 a day).
 */
export const PASSWORD_CONFIRMATIONS = { limit: 5, ttl: 15 * MINUTE };
/**
 * Registrations and logins per client network (an IPv4 /24, an IPv6 /48), across both routes and
 * every email: the spec's 5 a minute per IP counts an IPv6 client's whole /64, and whoever holds a
 * /48 holds 65,536 of them, each a password hashed (scrypt: tens of milliseconds of one of the
 * threads DNS lookups share), a guess at any account's password, or an account made.
 */
export const PASSWORD_ROUTES_PER_NETWORK = { limit: 30, ttl: MINUTE };
/** Metadata: the route counts against PASSWORD_ROUTES_PER_NETWORK too (CredentialThrottlerGuard). */
export const COUNTED_PER_NETWORK = 'crawlgate:password-routes-per-network';
/** The spec's limit per IP (LimitPerIp) and PASSWORD_ROUTES_PER_NETWORK beside it. */
export const LimitPerIpAndNetwork = (limit: number) =>
  applyDecorators(LimitPerIp(limit), SetMetadata(COUNTED_PER_NETWORK, true));

/**
 * Logins per account (by email, registered or not) from one client network (an IPv4 /24, an IPv6
 * /48), right or wrong, then from all networks, counting only the attempts the first let through:
 * the spec's 5 a minute per IP alone lets a guesser with many addresses try passwords without
 * end. Counted per network first so that a stranger's wrong passwords do not lock the owner out
 * (a thief holding the account's API key would keep it that way: a login is how the owner takes
 * the key back). A stranger holding addresses in ten networks blocks the account, but not from the
 * networks it logged in from (KnownNetworksStore), counted for that network only. Counted before
 * the password is checked: attempts sent at once cannot outrun the count.
 */
export const LOGINS_PER_ACCOUNT_AND_NETWORK = { limit: 10, ttl: 15 * MINUTE };
export const LOGINS_PER_ACCOUNT = { limit: 100, ttl: 15 * MINUTE };

/**
 * Requests to the wallet routes per client IP, across every wallet address it names: each address
 * has its own 100 a minute per client (an address proves nothing), so without this one client
 * could read wallet histories without end by naming ever more addresses.
 */
export const WALLET_ROUTES_PER_CLIENT = { limit: 1_000, ttl: MINUTE };

/**
 * Documents the wallet routes' limits (WalletAuth applies it), which CredentialThrottlerGuard
 * counts on every route WalletAuth guards: the default per address and client IP, and WALLET_ROUTES_PER_CLIENT.
 */
export const LimitPerWalletAndClient = () =>
  ApiExtension(RATE_LIMIT_EXTENSION, {
    limit: DEFAULT_LIMIT.limit,
    window_seconds: MINUTE / 1000,
    per: 'wallet',
    per_client: WALLET_ROUTES_PER_CLIENT.limit,
  } satisfies RateLimitDoc);

/** A route no limit applies to (health checks). */
export const Unlimited = () => applyDecorators(SkipThrottle(), ApiExtension(RATE_LIMIT_EXTENSION, false));

/**
 * Gate ids no usable secret of their site signed, sent to verify, per client (the IP, or the site
 * whose valid token the request carries: ForgedGateBudget): each costs the
 * database its reads before the 404, and each opens a fresh bucket of the route's limit per gate
 * (LimitPerGate). Past it, that client's verifies answer 429 until the minute is over, before any
 * read (ForgedGateBudget). A middleware checks a gate's MAC before it forwards a payment, so the
 * clients that reach this are the ones making ids up (or a middleware still holding a secret the
 * API revoked); an expired gate its site signed counts nothing.
 */
export const FORGED_GATES_PER_CLIENT = { limit: 100, ttl: MINUTE };
