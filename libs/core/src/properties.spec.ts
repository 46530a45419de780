import fc from 'fast-check';
import { signAccessToken, verifyAccessToken, peekAccessTokenPayload } from './access-token';
import { compilePriceTable, globSteps, validatePathPattern } from './glob';
import { formatMicrosUsd, MAX_PRICE_MICROS, parsePriceUsd } from './price';
import { requestPath } from './request-path';
import { parsePaymentPayload } from './x402';

/*
 * Properties over random input: the parsers face the open internet, so whatever arrives they must
 * answer (never throw), and what they accept must round-trip. Runs are bounded to keep the suite fast.
 */

const RUNS = { numRuns: 300 };
const anyText = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }));

describe('price parser', () => {
  it('answers any JSON value without throwing, and accepts only 0..1 USD', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.double(), anyText), (input) => {
        const parsed = parsePriceUsd(input);
        if (parsed.ok) expect(parsed.micros >= 0n && parsed.micros <= MAX_PRICE_MICROS).toBe(true);
        else expect(typeof parsed.msg).toBe('string');
      }),
      RUNS,
    );
  });

  it('round-trips every micro-USD amount through its decimal string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_PRICE_MICROS }), (micros) => {
        const parsed = parsePriceUsd(formatMicrosUsd(micros));
        expect(parsed).toEqual({ ok: true, micros });
      }),
      RUNS,
    );
  });

  it('reads a number and its decimal string alike', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (micros) => {
        const number = micros / 1_000_000;
        expect(parsePriceUsd(number)).toEqual(parsePriceUsd(String(number)));
      }),
      RUNS,
    );
  });
});

describe('glob compiler and request paths', () => {
  it('judges any pattern without throwing, and compiles every pattern it accepts', () => {
    fc.assert(
      fc.property(anyText, (body) => {
        const pattern = `/${body}`;
        if (validatePathPattern(pattern) === null) {
          const table = compilePriceTable([{ pattern, micros: 1n }], 0n);
          expect([0n, 1n]).toContain(table.resolve(pattern).micros);
        }
      }),
      RUNS,
    );
  });

  it('normalises any input to a path starting with "/"', () => {
    fc.assert(
      fc.property(anyText, (url) => expect(requestPath(url).startsWith('/')).toBe(true)),
      RUNS,
    );
  });

  it('prices a web path the same whatever its query and fragment', () => {
    fc.assert(
      fc.property(fc.webPath(), fc.webQueryParameters(), fc.webFragments(), (path, query, fragment) => {
        const base = `/${path.replace(/^\//, '')}`;
        expect(requestPath(`${base}?${query}#${fragment}`)).toBe(requestPath(base));
        expect(requestPath(`https://example.com${base}?${query}`)).toBe(requestPath(base));
      }),
      RUNS,
    );
  });

  it('keeps canonical paths as they are, exactly as the full normalisation would', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9\-._~!$&'()*+,;=:@]{0,12}$/);
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (segments) => {
        const path = '/' + segments.join('/');
        // An absolute URL never takes the fast path, so it shows what the full normalisation makes of it.
        expect(requestPath(path)).toBe(requestPath(`http://example.com${path}`));
      }),
      { numRuns: 2000 },
    );
  });

  it('never lets `*` cross a segment', () => {
    const segment = fc.stringMatching(/^[a-z0-9-]{1,12}$/);
    fc.assert(
      fc.property(segment, segment, segment, (a, b, c) => {
        const table = compilePriceTable([{ pattern: `/${a}/*`, micros: 5n }], 0n);
        expect(table.resolve(`/${a}/${b}`).micros).toBe(5n);
        expect(table.resolve(`/${a}/${b}/${c}`).micros).toBe(0n);
      }),
      RUNS,
    );
  });
});

describe('glob matcher against a backtracking reference', () => {
  /*
   * Patterns are built from pieces, each with the RegExp the old compiler made of it, and paths from
   * samples of the same pieces (so that many of them match), sometimes changed in one place. The
   * reference is that RegExp, which backtracks: inputs stay small enough for it. A URL that is not
   * a URL ("x:…") is taken as raw path text, so lone surrogates reach the matcher that way.
   */
  interface Piece {
    glob: string;
    regex: string;
    sample: fc.Arbitrary<string>;
  }
  const char = fc.constantFrom('a', 'b', 'a', 'b', '-', '.', 'é', '😀', '😃', '*', '\uD83D', '\uDE00');
  const literal = (glob: string, regex: string, ...samples: string[]): Piece => ({
    glob,
    regex,
    sample: fc.constantFrom(...samples),
  });
  const oneOf = (glob: string, regex: string): Piece => ({ glob, regex, sample: char });
  const a = literal('a', 'a', 'a');
  const any = oneOf('?', '[^/]');
  const ab = oneOf('[ab]', '[ab]');
  const star: Piece = { glob: '*', regex: '[^/]*', sample: fc.string({ unit: char, maxLength: 4 }) };
  const pieces: Piece[] = [
    a,
    literal('b', 'b', 'b'),
    literal('aab', 'aab', 'aab'),
    literal('abab', 'abab', 'abab'),
    literal('/', '\\/', '/'),
    literal('-', '-', '-'),
    literal('.', '\\.', '.'),
    literal('é', 'é', 'é', '%C3%A9'),
    literal('😀', '😀', '😀'),
    literal('\uD83D', '\uD83D', '\uD83D'),
    literal('\uDE00', '\uDE00', '\uDE00'),
    literal('%61', 'a', 'a', '%61'),
    literal('%C3%A9', 'é', 'é'),
    literal('%2f', '%2F', '%2F', '%2f'),
    literal('\\*', '\\*', '*'),
    literal('\\[', '\\[', '['),
    any,
    ab,
    oneOf('[!a]', '[^/a]'),
    oneOf('[^b-z]', '[^/b-z]'),
    oneOf('[a-é]', '(?!/)[a-é]'),
    oneOf('[😀-😎]', '[😀-😎]'),
    oneOf('[*?]', '[*?]'),
    oneOf('[ -~]', '(?!/)[ -~]'),
    star,
  ];
  // Stars and one-character pieces weigh more: they are what backtracking trips on.
  const piece = fc.oneof(
    { arbitrary: fc.constantFrom(...pieces), weight: 3 },
    { arbitrary: fc.constant(star), weight: 2 },
    { arbitrary: fc.constantFrom(a, any, ab), weight: 2 },
  );
  const edit = fc.record({
    at: fc.nat(),
    kind: fc.constantFrom('insert', 'replace', 'delete'),
    text: fc.oneof(char, fc.constant('/')),
  });
  const input = fc
    .array(piece, { maxLength: 10 })
    .chain((parts) =>
      fc.tuple(fc.constant(parts), fc.tuple(...parts.map((part) => part.sample)), fc.option(edit), fc.boolean()),
    );

  it('answers as the RegExp compilation does, within (path + 2) × (pattern + 1) steps', () => {
    fc.assert(
      fc.property(input, ([parts, samples, change, opaque]) => {
        const head = opaque ? 'x:' : '';
        const pattern = '/' + head + parts.map((part) => part.glob).join('');
        fc.pre(validatePathPattern(pattern) === null);
        let body = samples.join('');
        if (change) {
          const at = change.at % (body.length + 1);
          body =
            body.slice(0, at) +
            (change.kind === 'delete' ? '' : change.text) +
            body.slice(change.kind === 'insert' ? at : at + 1);
        }
        const url = (opaque ? 'x:' : '/') + body;
        const path = requestPath(url);
        const expected = new RegExp(`^\\/${head}${parts.map((part) => part.regex).join('')}$`, 'u').test(path);
        const before = globSteps();
        expect(compilePriceTable([{ pattern, micros: 1n }], 0n).resolve(url).rule === 0).toBe(expected);
        expect(globSteps() - before).toBeLessThanOrEqual(stepBound(pattern, path));
      }),
      { numRuns: 1000 },
    );
  });

  /*
   * Long chunks between stars: over 32 places the search keeps several state words, and from 129 on
   * it stops updating the places that can no longer end a match before the segment does. Paths repeat
   * the chunk's own sample or runs of "a", "ab", "ba" around it, so that partial matches run long and
   * fail late (the shapes that made the naive search slow), and are sometimes changed in a few places.
   */
  // Each place samples text it accepts, so that unchanged paths match.
  const fits = (glob: string, regex: string, ...samples: string[]): Piece => ({
    glob,
    regex,
    sample: fc.constantFrom(...samples),
  });
  const places = [
    fits('b', 'b', 'b'),
    fits('é', 'é', 'é', '%C3%A9'),
    fits('%61', 'a', 'a', '%61'),
    fits('\\*', '\\*', '*'),
    fits('[!a]', '[^/a]', 'b', 'é', '😀'),
    fits('[a-é]', '(?!/)[a-é]', 'a', 'b', 'é'),
    fits('[😀-😎]', '[😀-😎]', '😀', '😃'),
  ];
  const anyFit = fits('?', '[^/]', 'a', 'b', '😀', '-');
  const place = fc.oneof(
    { arbitrary: fc.constantFrom(...places), weight: 60 },
    { arbitrary: fc.constantFrom(a, anyFit, fits('[ab]', '[ab]', 'a', 'b')), weight: 240 },
    { arbitrary: fc.constant(fits('/', '\\/', '/')), weight: 1 }, // about a chunk in four holds one: then it is placed, not searched
  );
  const run = fc
    .tuple(fc.constantFrom('a', 'ab', 'ba', 'b', 'a😀'), fc.nat({ max: 90 }))
    .map(([text, times]) => text.repeat(times));
  const longInput = fc
    .tuple(
      fc.array(place, { minLength: 28, maxLength: 170, size: 'max' }),
      fc.constantFrom(fits('', '', ''), anyFit, fits('b', 'b', 'b'), fits('.pdf', '\\.pdf', '.pdf')),
    )
    .chain(([parts, tail]) =>
      fc.tuple(
        fc.constant(parts),
        fc.constant(tail),
        fc.tuple(...parts.map((part) => part.sample)),
        run,
        run,
        tail.sample,
        fc.array(edit, { maxLength: 3 }),
      ),
    );

  it('answers as the RegExp compilation does on long chunks and adversarial paths, within the step bound', () => {
    fc.assert(
      fc.property(longInput, ([parts, tail, samples, before, after, tailSample, changes]) => {
        const pattern = '/*' + parts.map((part) => part.glob).join('') + '*' + tail.glob;
        fc.pre(validatePathPattern(pattern) === null);
        let body = before + samples.join('') + after + tailSample;
        for (const change of changes) {
          const at = change.at % (body.length + 1);
          body =
            body.slice(0, at) +
            (change.kind === 'delete' ? '' : change.text) +
            body.slice(change.kind === 'insert' ? at : at + 1);
        }
        const url = '/' + body;
        const path = requestPath(url);
        const expected = new RegExp(
          `^\\/[^/]*${parts.map((part) => part.regex).join('')}[^/]*${tail.regex}$`,
          'u',
        ).test(path);
        const started = globSteps();
        expect(compilePriceTable([{ pattern, micros: 1n }], 0n).resolve(url).rule === 0).toBe(expected);
        expect(globSteps() - started).toBeLessThanOrEqual(stepBound(pattern, path));
      }),
      { numRuns: 500 },
    );
  });
});

/**
 * The bound on matcher steps, as in glob.spec.ts: a path character is read by one chunk search in
 * ⌈chunk / 32⌉ state words (3 of padding) and 12 table probes at most, and by one scan for its
 * segment's end; the other chunks are compared once.
 */
function stepBound(pattern: string, path: string): number {
  return Math.min(
    (path.length + 2) * (pattern.length + 1),
    path.length * (Math.ceil(pattern.length / 32) + 16) + 3 * pattern.length,
  );
}

describe('access tokens', () => {
  const payload = fc.record({
    gate_id: fc.uuid(),
    site_id: fc.uuid(),
    // The raw URL a bot asked for; the token carries its normalised path, as the API signs it.
    rawUrl: fc.webPath().map((path) => `/${path.replace(/^\//, '')}`),
    kid: fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/),
    iat: fc.integer({ min: 1_700_000_000, max: 1_900_000_000 }),
  });

  it('answers any string without throwing', () => {
    fc.assert(
      fc.property(anyText, (token) => {
        const check = verifyAccessToken(token, { secret: 'cgsec_x', siteId: 'site', anyPath: true });
        expect(check.valid).toBe(false);
        peekAccessTokenPayload(token);
      }),
      RUNS,
    );
  });

  it('verifies what it signed, and rejects it after any one-character change', () => {
    fc.assert(
      fc.property(payload, fc.nat(), fc.constantFrom(...'ABCxyz019-_.'), (generated, position, replacement) => {
        const { rawUrl, ...rest } = generated;
        const fields = { ...rest, url: requestPath(rawUrl), exp: rest.iat + 1800 };
        const token = signAccessToken(fields, 'cgsec_secret');
        const options = { secret: 'cgsec_secret', siteId: fields.site_id, path: fields.url, now: fields.iat + 1 };
        expect(verifyAccessToken(token, options)).toEqual({ valid: true, payload: fields });
        const at = position % token.length;
        if (token[at] === replacement) return;
        const mutated = token.slice(0, at) + replacement + token.slice(at + 1);
        expect(verifyAccessToken(mutated, options).valid).toBe(false);
      }),
      RUNS,
    );
  });
});

describe('x402 payment payload parser', () => {
  it('answers any JSON value without throwing', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (input) => {
        const parsed = parsePaymentPayload(input);
        if (!parsed.ok) expect(parsed.reason).toBe('invalid_payload');
      }),
      RUNS,
    );
  });
});
