import { markingUnsent, wasUnsent } from './unsent';

const failed = (cause: unknown) => new TypeError('fetch failed', { cause });
const refused = () =>
  failed(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', syscall: 'connect' }));
const reset = () => failed(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));

/** What markingUnsent throws for `send`, and whether it is marked unsent. */
async function thrown(send: (http: typeof fetch) => Promise<unknown>, http: typeof fetch) {
  try {
    await markingUnsent(http, send);
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
