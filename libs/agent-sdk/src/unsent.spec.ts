import { markingUnsent, wasUnsent } from './unsent';

const failed = (cause: unknown) => new TypeError('fetch failed', { cause });
const refused = () =>
  failed(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', syscall: 'connect' }));
const reset = () => failed(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));

/** What markingUnsent throws for `send`, and whether it is marked unsent. */
async function thrown(send: (http: typeof fetch) => Promise<unknown>, http: typeof fetch, leaveUnless?: AbortSignal) {
  try {
    await markingUnsent(http, send, leaveUnless);
  } catch (error) {
    return { error, unsent: wasUnsent(error) };
  }
  throw new Error('it did not throw');
}

describe('markingUnsent', () => {
  const answered = () => Promise.resolve(new Response(null, { status: 302 }));

  it('marks a failure before any request went out', async () => {
    expect(
      await thrown(
        () => Promise.reject(new Error('the signature was not made')),
        () => answered(),
      ),
    ).toMatchObject({ unsent: true });
  });

  it('does not mark a request that could not connect: fetch or its dispatcher may have sent it on an earlier connection', async () => {
    expect(
      await thrown(
        (http) => http('http://site/'),
        () => Promise.reject(refused()),
      ),
    ).toMatchObject({ unsent: false });
    expect(
      await thrown(
        (http) => http('http://site/'),
        () => Promise.reject(failed(new AggregateError([refused().cause]))),
      ),
    ).toMatchObject({ unsent: false });
  });

  it('does not mark a lost answer, nor a later request failing once the first was answered', async () => {
    expect(
      await thrown(
        (http) => http('http://site/'),
        () => Promise.reject(reset()),
      ),
    ).toMatchObject({ unsent: false });
    let calls = 0;
    const redirectThenRefused: typeof fetch = () => (calls++ === 0 ? answered() : Promise.reject(refused()));
    expect(
      await thrown(async (http) => {
        await http('http://site/');
        return http('http://elsewhere/');
      }, redirectThenRefused),
    ).toMatchObject({ unsent: false });
  });

  it('sends nothing for a caller that gave up before the first request left, and marks its abort', async () => {
    let calls = 0;
    const caller = new AbortController();
    caller.abort();
    const counted: typeof fetch = () => (calls++, answered());
    expect(await thrown((http) => http('http://site/'), counted, caller.signal)).toEqual({
      error: expect.objectContaining({ name: 'AbortError', cause: caller.signal.reason }),
      unsent: true,
    });
    expect(calls).toBe(0);
  });

  it('marks an error of its own for a caller that gave up, never the caller’s reason, which another send may throw after its request left', async () => {
    const caller = new AbortController();
    caller.abort('stop'); // a reason that is no object
    const first = await thrown((http) => http('http://site/'), answered, caller.signal);
    expect(first).toMatchObject({ error: { name: 'AbortError', cause: 'stop' }, unsent: true });
    const shared = new AbortController();
    shared.abort(new Error('shutting down'));
    expect(await thrown((http) => http('http://site/'), answered, shared.signal)).toMatchObject({ unsent: true });
    expect(wasUnsent(shared.signal.reason)).toBe(false);
  });

  it('lets a send whose first request left run to its end, whatever its caller does then', async () => {
    const caller = new AbortController();
    const urls: string[] = [];
    const recorded: typeof fetch = (input) => (urls.push(String(input)), answered());
    const response = await markingUnsent(
      recorded,
      async (http) => {
        await http('http://site/');
        caller.abort();
        return http('http://elsewhere/');
      },
      caller.signal,
    );
    expect(response.status).toBe(302);
    expect(urls).toEqual(['http://site/', 'http://elsewhere/']);
  });

  it('passes an answer and a thrown value through as they are', async () => {
    const response = new Response('ok');
    expect(
      await markingUnsent(
        () => Promise.resolve(response),
        (http) => http('http://site/'),
      ),
    ).toBe(response);
    const error = new Error('the signature was not made');
    expect(
      await thrown(
        () => Promise.reject(error),
        () => answered(),
      ),
    ).toEqual({ error, unsent: true });
    expect(await thrown(() => Promise.reject('a string'), answered)).toEqual({ error: 'a string', unsent: false });
  });
});
