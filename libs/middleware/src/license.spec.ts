import { compileSitePrices, parsePriceUsd, priceRoute, readRoute, type SiteOffer } from '@crawlgate/core';
import { buildRslDocument, createLicensing, rslPattern } from './license';
import { robotsTxt } from './robots';

// The real robotsTxt, counted: how often the license builds robots.txt.
jest.mock('./robots', () => {
  const actual = jest.requireActual('./robots');
  return { ...actual, robotsTxt: jest.fn(actual.robotsTxt) };
});

/*
 * RSL 1.0 publishes no XML schema (none at rslstandard.org nor in github.com/rslstandard/rsl), so
 * the document is checked against the specification's element tables (rslstandard.org/rsl: which
 * element may hold which, required attributes, the payment types, the usage vocabulary, ISO 4217
 * amounts) by the small checker below, and the checker against the specification's own examples.
 */

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

/** A strict reader for the XML we emit: elements, attributes, text, the declaration. Throws on anything malformed. */
function parseXml(xml: string): XmlElement {
  let at = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at ${at}: ${JSON.stringify(xml.slice(at, at + 30))}`);
  };
  const unescape = (text: string) => {
    if (/&(?!(?:amp|lt|gt|quot|apos);)/.test(text)) fail('bad entity');
    return text
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&');
  };
  const declaration = /^<\?xml version="1\.0" encoding="UTF-8"\?>\s*/i.exec(xml);
  if (declaration) at = declaration[0].length;
  function element(): XmlElement {
    const open =
      /^<([A-Za-z][\w.-]*)((?:\s+[A-Za-z][\w:.-]*\s*=\s*"[^"<]*")*)\s*(\/?)>/.exec(xml.slice(at)) ??
      fail('expected a start tag');
    at += open[0].length;
    const attributes: Record<string, string> = {};
    for (const [, name, value] of open[2].matchAll(/([A-Za-z][\w:.-]*)\s*=\s*"([^"]*)"/g)) {
      if (name in attributes) fail(`duplicate attribute ${name}`);
      attributes[name] = unescape(value);
    }
    const node: XmlElement = { name: open[1], attributes, children: [], text: '' };
    if (open[3] === '/') return node;
    for (;;) {
      const text = /^[^<]*/.exec(xml.slice(at))![0];
      node.text += unescape(text);
      at += text.length;
      if (xml.startsWith(`</${node.name}>`, at)) {
        at += node.name.length + 3;
        return node;
      }
      if (xml.startsWith('</', at)) fail(`mismatched end tag in <${node.name}>`);
      node.children.push(element());
    }
  }
  const root = element();
  if (xml.slice(at).trim() !== '') fail('content after the root element');
  return root;
}

const CHILDREN: Record<string, readonly string[]> = {
  rsl: ['content'],
  content: ['license', 'schema', 'copyright', 'terms'],
  license: ['permits', 'prohibits', 'payment', 'legal'],
  payment: ['standard', 'custom', 'amount'],
};
const PAYMENT_TYPES = ['purchase', 'subscription', 'training', 'crawl', 'inference', 'attribution', 'free'];
const USAGE = ['all', 'ai-all', 'ai-train', 'ai-input', 'ai-index', 'search'];

/** The problems of an RSL 1.0 document, by the specification's element tables; [] when it conforms. */
function rslProblems(xml: string): string[] {
  const problems: string[] = [];
  const root = parseXml(xml);
  if (root.name !== 'rsl') problems.push(`root is <${root.name}>`);
  if (root.attributes.xmlns !== 'https://rslstandard.org/rsl')
    problems.push('xmlns is not https://rslstandard.org/rsl');
  if (!root.children.some((child) => child.name === 'content')) problems.push('no <content>');
  const visit = (node: XmlElement) => {
    const allowed = CHILDREN[node.name];
    for (const child of node.children) {
      if (!allowed?.includes(child.name)) problems.push(`<${child.name}> inside <${node.name}>`);
      visit(child);
    }
    switch (node.name) {
      case 'content':
        if (!node.attributes.url) problems.push('<content> without url');
        if (!node.children.some((child) => child.name === 'license')) problems.push('<content> without <license>');
        break;
      case 'permits':
      case 'prohibits':
        if (!['usage', 'user', 'geo'].includes(node.attributes.type))
          problems.push(`<${node.name}> type ${node.attributes.type}`);
        if (node.attributes.type === 'usage')
          for (const token of node.text.trim().split(/[\s,]+/))
            if (!USAGE.includes(token)) problems.push(`usage ${token}`);
        break;
      case 'payment':
        if (node.attributes.type !== undefined && !PAYMENT_TYPES.includes(node.attributes.type))
          problems.push(`payment type ${node.attributes.type}`);
        if (node.attributes.type !== 'free' && node.attributes.type !== undefined && node.children.length === 0)
          problems.push('a paid <payment> with no <amount>, <standard> or <custom>');
        break;
      case 'amount':
        if (!/^[A-Z]{3}$/.test(node.attributes.currency ?? '')) problems.push('<amount> without an ISO 4217 currency');
        if (!/^\d+(?:\.\d+)?$/.test(node.text.trim())) problems.push(`<amount> ${node.text}`);
        break;
      case 'terms':
      case 'schema':
      case 'standard':
      case 'custom':
        if (!/^https?:\/\/\S+$/.test(node.text.trim())) problems.push(`<${node.name}> is not a URL`);
        break;
    }
  };
  visit(root);
  return problems;
}

// Examples from the RSL documentation (rslstandard.org: the Crawler Authorization Protocol guide; the
// specification's <payment>/<amount> and <permits>/<prohibits> tables, as the RSL guides show them).
const SPEC_EXAMPLES = [
  `<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/" server="https://api.rslcollective.org">
    <license>
      <permits type="usage">all</permits>
    </license>
  </content>
</rsl>`,
  `<?xml version="1.0" encoding="UTF-8"?>
<rsl xmlns="https://rslstandard.org/rsl">
  <content url="https://example.com/news/*" lastmod="2026-03-27T15:00:00Z">
    <terms>https://example.com/licensing-terms</terms>
    <license>
      <permits type="usage">ai-input ai-index</permits>
      <prohibits type="usage">ai-train</prohibits>
      <payment type="crawl">
        <amount currency="USD">0.001</amount>
      </payment>
    </license>
  </content>
  <content url="/open/">
    <license>
      <permits type="usage">all</permits>
      <payment type="free"/>
    </license>
  </content>
</rsl>`,
];

const offer = (overrides: Partial<SiteOffer> = {}): SiteOffer =>
  ({
    site_id: 'site_1',
    domain: 'news.example.com',
    default_price_usd: '0.01',
    rules: [
      { path: '/premium/*', price_usd: '0.5' },
      { path: '/free/*', price_usd: '0' },
      { path: '/about', price_usd: '0.002' },
    ],
    pricing_version: 3,
    ...overrides,
  }) as SiteOffer;

describe('the RSL checker', () => {
  it.each(SPEC_EXAMPLES.map((xml, i) => [i, xml]))('accepts the specification example %i', (_i, xml) => {
    expect(rslProblems(xml)).toEqual([]);
  });

  it.each([
    ['another namespace', SPEC_EXAMPLES[1].replace('https://rslstandard.org/rsl', 'https://example.com/rsl'), 'xmlns'],
    ['an unknown payment type', SPEC_EXAMPLES[1].replace('type="crawl"', 'type="per-crawl"'), 'payment type'],
    ['an amount without currency', SPEC_EXAMPLES[1].replace(' currency="USD"', ''), 'ISO 4217'],
    ['an amount that is not a number', SPEC_EXAMPLES[1].replace('>0.001<', '>$0.001<'), '<amount>'],
    ['a usage outside the vocabulary', SPEC_EXAMPLES[1].replace('ai-train<', 'training<'), 'usage training'],
    [
      '<payment> outside <license>',
      SPEC_EXAMPLES[0].replace('<license>', '<payment type="free"/><license>'),
      '<payment> inside <content>',
    ],
    ['<content> without url', SPEC_EXAMPLES[0].replace(' url="/"', ''), 'without url'],
  ])('rejects %s', (_name, xml, problem) => {
    expect(rslProblems(xml).join('; ')).toContain(problem);
  });

  it('refuses malformed XML', () => {
    expect(() => rslProblems('<rsl xmlns="https://rslstandard.org/rsl"><content url="/"></rsl>')).toThrow(/mismatched/);
    expect(() => rslProblems('<rsl xmlns="https://rslstandard.org/rsl"><content url="/a&b"/></rsl>')).toThrow(/entity/);
  });
});

describe('buildRslDocument', () => {
  it('conforms to RSL 1.0 and states each rule then the default as payment type="crawl" in USD', () => {
    const xml = buildRslDocument(offer(), { search: true, aiInput: true, aiTrain: false });
    expect(rslProblems(xml)).toEqual([]);
    const contents = parseXml(xml).children;
    const read = contents.map((content) => {
      const license = content.children.find((child) => child.name === 'license')!;
      const payment = license.children.find((child) => child.name === 'payment')!;
      return [content.attributes.url, payment.attributes.type, payment.children[0]?.text ?? null];
    });
    // The free rule "/free/*" is left out: RFC 9309's "*" also covers /free/a/b, which the rule does not free.
    // Each rule's trailing-slash twin (priced alike by the gate) beside it.
    expect(read).toEqual([
      ['https://news.example.com/premium/*', 'crawl', '0.5'],
      ['https://news.example.com/premium$', 'crawl', '0.5'],
      ['https://news.example.com/about$', 'crawl', '0.002'],
      ['https://news.example.com/about/$', 'crawl', '0.01'], // no rule matches /about/ as written: the default
      ['https://news.example.com/', 'crawl', '0.01'],
    ]);
    expect(xml).toContain('<permits type="usage">search ai-input</permits>');
    expect(xml).toContain('<prohibits type="usage">ai-train</prohibits>');
    expect(xml).toContain('<terms>https://news.example.com/.well-known/pay.json</terms>');
  });

  it('states no permits or prohibits when the publisher set no preference', () => {
    const xml = buildRslDocument(offer());
    expect(rslProblems(xml)).toEqual([]);
    expect(xml).not.toMatch(/permits|prohibits/);
  });

  it('escapes what XML must, so a rule cannot inject elements', () => {
    const xml = buildRslDocument(
      offer({
        rules: [
          { path: '/a"/><content url="/x', price_usd: '1' },
          { path: '/b&c<d>', price_usd: '1' },
        ],
      }),
    );
    expect(rslProblems(xml)).toEqual([]);
    expect(parseXml(xml).children.map((c) => c.attributes.url)).toEqual([
      'https://news.example.com/a"/><content url="/x$',
      'https://news.example.com/a"/><content url="/x/$',
      'https://news.example.com/b&c<d>$',
      'https://news.example.com/b&c<d>/$',
      'https://news.example.com/',
    ]);
  });

  it('leaves out a free rule RFC 9309 could only write wider, never a priced one or an exact free path', () => {
    const xml = buildRslDocument(
      offer({
        rules: [
          { path: '/report-[0-9]', price_usd: '0' },
          { path: '/post-?', price_usd: '0' },
          { path: '/imprint', price_usd: '0' },
          { path: '/report-[0-9]', price_usd: '0.02' },
        ],
      }),
    );
    expect(rslProblems(xml)).toEqual([]);
    expect(parseXml(xml).children.map((c) => c.attributes.url)).toEqual([
      'https://news.example.com/imprint$',
      'https://news.example.com/imprint/$',
      'https://news.example.com/report-*',
      'https://news.example.com/',
    ]);
  });

  it('never states a price below what the gate charges, read as RFC 9309 reads it (longest match, "*" across segments) (helper-443)', () => {
    const cases: { rules: SiteOffer['rules']; default_price_usd: string; paths: string[] }[] = [
      // A priced rule's "*" widened across segments: /blog/2024/post is the default's, not the rule's.
      {
        rules: [{ path: '/blog/*', price_usd: '0.001' }],
        default_price_usd: '0.05',
        paths: ['/blog/2024/post', '/blog/x'],
      },
      // An exact free rule after a wildcard that matches it first: the gate charges the wildcard's price.
      {
        rules: [
          { path: '/a/*', price_usd: '0.5' },
          { path: '/a/free', price_usd: '0' },
        ],
        default_price_usd: '0.01',
        paths: ['/a/free', '/a/x', '/a/b/c', '/b'],
      },
      // A path a rule prices through its trailing-slash twin; a rule written with escapes before an exact one.
      {
        rules: [
          { path: '/premium/*', price_usd: '1' },
          { path: '/caf%C3%A9/*', price_usd: '0.1' },
          { path: '/café/menu', price_usd: '0' },
          { path: '/Docs/*', price_usd: '0.7' },
          { path: '/docs/intro', price_usd: '0' },
        ],
        default_price_usd: '0.01',
        paths: ['/premium', '/premium/', '/café/menu', '/docs/intro'],
      },
      // An exact rule whose twin a later rule prices; a letter whose case fold is another (helper-446).
      {
        rules: [
          { path: '/premium', price_usd: '0.01' },
          { path: '/premium/*', price_usd: '1' },
          { path: '/ſtore/*', price_usd: '1' },
          { path: '/store/menu', price_usd: '0' },
        ],
        default_price_usd: '0.01',
        paths: ['/premium', '/premium/', '/store/menu', '/store/menu/'],
      },
      // An exact rule whose twin the gate charges at a dearer default (helper-447).
      {
        rules: [
          { path: '/premium', price_usd: '0.01' },
          { path: '/cheap/', price_usd: '0.01' },
        ],
        default_price_usd: '1',
        paths: ['/premium', '/premium/', '/cheap/', '/cheap'],
      },
      // A later, dearer rule under a cheaper one's widened scope.
      {
        rules: [
          { path: '/docs/*', price_usd: '0.001' },
          { path: '/docs/*/private', price_usd: '0.9' },
          { path: '/p-?', price_usd: '0.002' },
          { path: '/p-[0-9]/x', price_usd: '0.3' },
        ],
        default_price_usd: '0',
        paths: ['/docs/a', '/docs/a/private', '/docs/a/b/private', '/p-1', '/p-1/x', '/p-12/x', '/other'],
      },
    ];
    for (const { rules, default_price_usd, paths } of cases) {
      const site = offer({ rules, default_price_usd });
      const xml = buildRslDocument(site);
      expect(rslProblems(xml)).toEqual([]);
      const scopes = parseXml(xml).children.map((content) => {
        const payment = content.children
          .find((child) => child.name === 'license')!
          .children.find((child) => child.name === 'payment')!;
        return {
          pattern: content.attributes.url.slice('https://news.example.com'.length),
          micros: payment.attributes.type === 'free' ? 0n : micros(payment.children[0].text!),
        };
      });
      const prices = compileSitePrices(
        rules.map((rule) => ({ pattern: rule.path, micros: micros(rule.price_usd) })),
        micros(default_price_usd),
      );
      for (const path of paths) {
        const stated = longestMatch(scopes, path).micros;
        // As the gate charges a request of that path (its twin and a lenient router's case folding included).
        const charged = priceRoute(prices, readRoute(path), {});
        expect({ path, stated: stated >= charged }).toEqual({ path, stated: true });
      }
    }
  });

  it('writes a control character a stored rule holds percent-encoded, as a request path carries it: the document stays XML (helper-443)', () => {
    const xml = buildRslDocument(offer({ rules: [{ path: '/a\u0001b\u007f', price_usd: '0.1' }] }));
    expect(rslProblems(xml)).toEqual([]);
    expect(parseXml(xml).children[0].attributes.url).toBe('https://news.example.com/a%01b%7F$');
  });

  it('writes a character XML cannot hold percent-encoded (helper-444)', () => {
    const xml = buildRslDocument(offer({ rules: [{ path: '/a\uFFFF/*', price_usd: '0.1' }] }));
    expect(rslProblems(xml)).toEqual([]);
    expect(parseXml(xml).children[0].attributes.url).toBe('https://news.example.com/a%EF%BF%BF/*');
  });

  it('writes a free default as payment type="free"', () => {
    const xml = buildRslDocument(offer({ default_price_usd: '0', rules: [] }));
    expect(rslProblems(xml)).toEqual([]);
    expect(xml).toContain('<payment type="free"/>');
  });
});

const micros = (price: string) => {
  const parsed = parsePriceUsd(price);
  if (!parsed.ok) throw new Error(price);
  return parsed.micros;
};

/** RFC 9309's matching: "*" any characters, a final "$" the end; the longest matching pattern wins. */
function longestMatch<T extends { pattern: string }>(scopes: T[], path: string): T {
  const matching = scopes.filter(({ pattern }) => {
    const exact = pattern.endsWith('$');
    const body = (exact ? pattern.slice(0, -1) : pattern)
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    return new RegExp(`^${body}${exact ? '$' : ''}`).test(path);
  });
  return matching.reduce((best, scope) => (scope.pattern.length > best.pattern.length ? scope : best));
}

describe('rslPattern', () => {
  it.each([
    ['/premium/*', '/premium/*'],
    ['/a/*/b', '/a/*/b'],
    ['/post-?', '/post-*'],
    ['/about', '/about$'],
    ['/price$', '/price%24$'],
    // A class is a wildcard, never the literal text "[0-9]" (which RFC 9309 would match as written).
    ['/report-[0-9]', '/report-*'],
    ['/premium/[a-z]*', '/premium/*'],
    ['/x/[!ab]c', '/x/*c'],
    ['/a\\*b', '/a*b'],
    ['/a\\?b', '/a%3Fb$'],
    ['/a\\[b', '/a[b$'],
  ])('%s reads as %s', (glob, pattern) => {
    expect(rslPattern(glob)).toBe(pattern);
  });
});

describe('createLicensing', () => {
  it('serves the document at /license.xml for GET and HEAD, with its media type, and nothing else', () => {
    const licensing = createLicensing();
    const answer = licensing.answer('GET', '/license.xml', offer());
    expect(answer).toMatchObject({
      kind: 'respond',
      status: 200,
      headers: { 'content-type': 'application/rsl+xml; charset=utf-8' },
    });
    expect(licensing.answer('HEAD', '/license.xml', offer())).toMatchObject({ status: 200 });
    expect(licensing.answer('POST', '/license.xml', offer())).toBeUndefined();
    expect(licensing.answer('GET', '/LICENSE.XML', offer())).toBeUndefined();
    expect(licensing.answer('GET', '/license.xml/', offer())).toBeUndefined();
    expect(licensing.answer('GET', '/robots.txt', offer())).toBeUndefined();
  });

  it('answers 503 while the terms have never loaded', () => {
    const answer = createLicensing().answer('GET', '/license.xml', undefined);
    expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '30' } });
    expect(JSON.parse((answer as { body: string }).body)).toMatchObject({ charged: false });
  });

  it('builds the document once per pricing version and domain', () => {
    const licensing = createLicensing();
    const first = licensing.document(offer());
    expect(licensing.document(offer())).toBe(first);
    const repriced = licensing.document(offer({ pricing_version: 4, default_price_usd: '0.02' }));
    expect(repriced).not.toBe(first);
    expect(repriced).toContain('<amount currency="USD">0.02</amount>');
  });

  it('links the license for 402s, and not when disabled or not loaded', () => {
    expect(createLicensing().linkHeader(offer())).toEqual({
      link: '<https://news.example.com/license.xml>; rel="license"; type="application/rsl+xml"',
    });
    expect(createLicensing({ path: '/terms/rsl.xml' }).linkHeader(offer())).toEqual({
      link: '<https://news.example.com/terms/rsl.xml>; rel="license"; type="application/rsl+xml"',
    });
    expect(createLicensing({ path: false }).linkHeader(offer())).toEqual({});
    expect(createLicensing({ path: false }).answer('GET', '/license.xml', offer())).toBeUndefined();
    expect(createLicensing().linkHeader(undefined)).toEqual({});
  });

  it('serves /robots.txt only when given one, with the License and usage lines', () => {
    expect(createLicensing().answer('GET', '/robots.txt', offer())).toBeUndefined();
    const licensing = createLicensing({ robotsTxt: 'User-agent: *\nDisallow: /admin\n', usage: { aiTrain: false } });
    const answer = licensing.answer('GET', '/robots.txt', offer());
    expect(answer).toMatchObject({ status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    expect(answer && answer.kind === 'respond' && answer.body).toBe(
      'License: https://news.example.com/license.xml\n\nUser-agent: *\nContent-Signal: ai-train=no\nContent-Usage: train-ai=n\nDisallow: /admin\n',
    );
    const early = licensing.answer('GET', '/robots.txt', undefined);
    expect(early).toMatchObject({ status: 200, headers: { 'cache-control': 'no-store' } });
    expect(early && early.kind === 'respond' && early.body).not.toContain('License:');
    expect(licensing.answer('GET', '/ROBOTS.TXT', offer())).toBeUndefined();
  });

  it('builds /robots.txt once per license URL, not on each request: a large base costs milliseconds each time (helper-443)', () => {
    const build = robotsTxt as jest.MockedFunction<typeof robotsTxt>;
    const licensing = createLicensing({ robotsTxt: `User-agent: *\n${'Disallow: /x\n'.repeat(20_000)}` });
    const built = build.mock.calls.length; // the check of the base at start-up
    const bodies = Array.from({ length: 50 }, () => {
      const answer = licensing.answer('GET', '/robots.txt', offer());
      return answer?.kind === 'respond' ? answer.body : undefined;
    });
    expect(new Set(bodies).size).toBe(1);
    expect(bodies[0]).toContain('License: https://news.example.com/license.xml');
    expect(build.mock.calls.length - built).toBe(1);
    licensing.answer('GET', '/robots.txt', offer({ domain: 'other.example.com' }));
    expect(build.mock.calls.length - built).toBe(2);
  });

  it.each([
    [{ path: 'license.xml' }, /licensing.path/],
    [{ path: '/a/../license.xml' }, /licensing.path/],
    [{ path: '/license%2Exml' }, /licensing.path/],
    [{ path: '/license.xml;x' }, /licensing.path/],
    [{ path: '//license.xml' }, /licensing.path/],
    [{ path: '/li cense.xml' }, /licensing.path/],
    [{ path: 7 }, /licensing.path/],
    [{ usage: { aiTraining: false } }, /licensing.usage.aiTraining is unknown/],
    [{ usage: { aiTrain: 'no' } }, /licensing.usage.aiTrain must be true or false/],
    [{ usage: 'no-train' }, /licensing.usage must be an object/],
    [
      { robotsTxt: 'User-agent: *\nContent-Signal: ai-train=no\n', usage: { aiTrain: false } },
      /already has Content-Signal/,
    ],
  ])('refuses %j', (options, message) => {
    expect(() => createLicensing(options as never)).toThrow(message);
  });
});
