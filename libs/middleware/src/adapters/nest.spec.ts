import 'reflect-metadata';
import { ForbiddenException, HttpException, type ExecutionContext } from '@nestjs/common';
import type { Crawlgate, CrawlgateRequest } from '../crawlgate';
import type { Decision } from '../decision';
import { CrawlgateGuard } from './nest';

/*
 * The guard's reading of Nest's execution contexts (the HTTP ones run against real Nest servers in
 * apps/e2e): a stand-in gate records what it was asked and answers 402, so every context either
 * reaches the gate and is refused, or is one the guard documents as not gated.
 */
const PAYMENT_REQUIRED: Decision = {
  kind: 'respond',
  status: 402,
  headers: { 'crawler-price': 'USD 0.5' },
  body: JSON.stringify({ detail: 'Payment required' }),
};

function guardAsking(decision: Decision = PAYMENT_REQUIRED) {
  const asked: CrawlgateRequest[] = [];
  const gate = {
    handleNow: (request: CrawlgateRequest) => {
      asked.push(request);
      return decision;
    },
  } as unknown as Crawlgate;
  return { guard: new CrawlgateGuard(gate), asked };
}

const request = { method: 'POST', url: '/graphql', headers: { 'user-agent': 'GPTBot/1.1' }, ip: '127.0.0.1' };

function contextOf(type: string, args: unknown[]): ExecutionContext {
  return {
    getType: () => type,
    getArgByIndex: (index: number) => args[index],
    getArgs: () => args,
    getClass: () => class Resolver {},
    getHandler: () => () => undefined,
    switchToHttp: () => ({ getRequest: () => args[0], getResponse: () => args[1], getNext: () => args[2] }),
    switchToRpc: () => ({}) as never,
    switchToWs: () => ({}) as never,
  } as unknown as ExecutionContext;
}

describe('CrawlgateGuard', () => {
  it.each([
    ['Apollo on Express ({ req, res })', (headers: object) => ({ req: request, res: headersOut(headers) })],
    ['Apollo on Fastify ({ request, reply })', (headers: object) => ({ request, reply: headersOut(headers) })],
    ['Mercurius ({ reply })', (headers: object) => ({ reply: { ...headersOut(headers), request } })],
  ])('gates a GraphQL resolver by its HTTP request: %s', async (_case, gqlContext) => {
    const { guard, asked } = guardAsking();
    const sent: Record<string, string> = {};
    const refused = await guard.canActivate(contextOf('graphql', [{}, {}, gqlContext(sent), {}])).catch((e) => e);
    expect(refused).toBeInstanceOf(HttpException);
    expect((refused as HttpException).getStatus()).toBe(402);
    expect(asked).toEqual([expect.objectContaining({ method: 'POST', url: '/graphql' })]);
    expect(sent).toEqual({ 'crawler-price': 'USD 0.5' });
  });

  it('refuses a GraphQL resolver with no HTTP request under it (a subscription), and one of an unknown type', async () => {
    const { guard, asked } = guardAsking({ kind: 'pass' });
    await expect(guard.canActivate(contextOf('graphql', [{}, {}, { connection: {} }, {}]))).rejects.toBeInstanceOf(
      ForbiddenException,
    );
    await expect(guard.canActivate(contextOf('graphql', [{}, {}, undefined, {}]))).rejects.toBeInstanceOf(
      ForbiddenException,
    );
    await expect(guard.canActivate(contextOf('grpc-web', [request]))).rejects.toBeInstanceOf(ForbiddenException);
    expect(asked).toEqual([]);
  });

  it('does not gate message transports and WebSocket gateways, which serve no HTTP page', async () => {
    const { guard, asked } = guardAsking();
    expect(await guard.canActivate(contextOf('rpc', [{ data: 1 }]))).toBe(true);
    expect(await guard.canActivate(contextOf('ws', [{}, { data: 1 }]))).toBe(true);
    expect(asked).toEqual([]);
  });

  it('gates an HTTP route by its request', async () => {
    const { guard, asked } = guardAsking();
    const sent: Record<string, string> = {};
    const get = { ...request, method: 'GET', url: '/premium/a' };
    await expect(guard.canActivate(contextOf('http', [get, headersOut(sent)]))).rejects.toBeInstanceOf(HttpException);
    expect(asked).toEqual([expect.objectContaining({ method: 'GET', url: '/premium/a' })]);
    expect(sent).toEqual({ 'crawler-price': 'USD 0.5' });
  });
});

/** A response whose header(name, value) writes into `into`. */
function headersOut(into: object) {
  return {
    header(name: string, value: string) {
      (into as Record<string, string>)[name] = value;
      return this;
    },
  };
}
