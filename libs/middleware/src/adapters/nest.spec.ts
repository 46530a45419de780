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

const request = {
  method: 'POST',
  url: '/graphql',
  headers: { 'user-agent': 'GPTBot/1.1', 'x-payment': 'e30=', 'PAYMENT-SIGNATURE': 'e30=', 'sign-in-with-x': 'e30=' },
  ip: '127.0.0.1',
};

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
    ['Apollo on Express ({ req, res })', () => ({ req: { ...request }, res: headersOut({}) })],
    ['Nest’s default ({ req })', () => ({ req: { ...request } })],
    ['Apollo on Fastify ({ request, reply })', () => ({ request: { ...request }, reply: headersOut({}) })],
    ['Mercurius ({ reply })', () => ({ reply: { ...headersOut({}), request: { ...request } } })],
  ])(
    'gates GraphQL resolvers by their HTTP request, once per request, taking no payment there: %s',
    async (_case, gqlContext) => {
      const { guard, asked } = guardAsking();
      const context = gqlContext();
      // Three root fields of one query: three guard runs, one decision.
      const answers = await Promise.all(
        [1, 2, 3].map(() => guard.canActivate(contextOf('graphql', [{}, {}, context, {}])).catch((e) => e)),
      );
      for (const refused of answers) {
        expect(refused).toBeInstanceOf(HttpException);
        expect((refused as HttpException).getStatus()).toBe(402);
      }
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ method: 'POST', url: '/graphql' });
      // The payment and sign-in headers never reach the gate: no payment is taken inside GraphQL.
      expect(Object.keys(asked[0].headers)).toEqual(['user-agent']);
    },
  );

  it('lets a GraphQL request through on a pass (a person, an allowed bot, a valid token), and refuses one a payment would open', async () => {
    expect(
      await guardAsking({ kind: 'pass' }).guard.canActivate(contextOf('graphql', [{}, {}, { req: request }])),
    ).toBe(true);
    const paid: Decision = { kind: 'pass-after-payment', headers: {} };
    await expect(
      guardAsking(paid).guard.canActivate(contextOf('graphql', [{}, {}, { req: { ...request } }])),
    ).rejects.toBeInstanceOf(ForbiddenException);
  });

  it('decides again for a request object that outlives a request (graphql-ws keeps its upgrade request)', async () => {
    const { guard, asked } = guardAsking({ kind: 'pass' });
    const context = contextOf('graphql', [{}, {}, { req: { ...request } }, {}]);
    const realNow = Date.now.bind(Date);
    const later = jest.spyOn(Date, 'now');
    try {
      expect(await guard.canActivate(context)).toBe(true);
      later.mockImplementation(() => realNow() + 60_000);
      expect(await guard.canActivate(context)).toBe(true);
    } finally {
      later.mockRestore();
    }
    expect(asked).toHaveLength(2);
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
