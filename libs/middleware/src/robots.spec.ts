import { robotsTxt } from './robots';

const LICENSE = 'https://news.example.com/license.xml';

describe('robotsTxt', () => {
  it('puts the License line first and the usage lines in the User-agent: * group, after its User-agent lines', () => {
    const base = 'User-agent: GPTBot\nDisallow: /private\n\nUser-agent: *\nUser-agent: Bingbot\nAllow: /\n';
    expect(robotsTxt(base, { licenseUrl: LICENSE, usage: { search: true, aiInput: true, aiTrain: false } })).toBe(
      'License: https://news.example.com/license.xml\n\n' +
        'User-agent: GPTBot\nDisallow: /private\n\n' +
        'User-agent: *\nUser-agent: Bingbot\n' +
        'Content-Signal: search=yes, ai-input=yes, ai-train=no\n' +
        'Content-Usage: search=y, ai-use=y, train-ai=n\n' +
        'Allow: /\n',
    );
  });

  it('adds a User-agent: * group when the publisher has none, and writes a whole file from nothing', () => {
    expect(robotsTxt('User-agent: GPTBot\r\nDisallow: /\r\n', { usage: { aiTrain: false } })).toBe(
      'User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nContent-Signal: ai-train=no\nContent-Usage: train-ai=n\n',
    );
    expect(robotsTxt('', { licenseUrl: LICENSE, usage: { search: true } })).toBe(
      `License: ${LICENSE}\n\nUser-agent: *\nContent-Signal: search=yes\nContent-Usage: search=y\n`,
    );
  });

  it('keeps the text as it is when there is nothing to add, and does not repeat a License line already there', () => {
    expect(robotsTxt('User-agent: *\nDisallow:\n', {})).toBe('User-agent: *\nDisallow:\n');
    expect(robotsTxt(`License: ${LICENSE}\nUser-agent: *\n`, { licenseUrl: LICENSE })).toBe(
      `License: ${LICENSE}\nUser-agent: *\n`,
    );
  });

  it.each([
    [
      'a license URL with a line break (a robots.txt injection)',
      'User-agent: *\n',
      { licenseUrl: `${LICENSE}\nDisallow: /` },
      /licenseUrl/,
    ],
    ['a relative license URL', '', { licenseUrl: '/license.xml' }, /licenseUrl/],
    ['a javascript: license URL', '', { licenseUrl: 'javascript:alert(1)' }, /licenseUrl/],
    [
      'a base that states Content-Signal already',
      'User-agent: *\ncontent-signal: ai-train=yes\n',
      { usage: { aiTrain: false } },
      /already has Content-Signal/,
    ],
    [
      'a base that states Content-Usage already',
      'User-agent: *\nContent-Usage: train-ai=y\n',
      { usage: { aiTrain: false } },
      /already has Content-Signal or Content-Usage/,
    ],
    ['a base over 500 KiB', '#'.repeat(500 * 1024 + 1), {}, /500 KiB/],
    ['a base that is not text', undefined, {}, /base must be/],
  ])('refuses %s', (_name, base, signals, message) => {
    expect(() => robotsTxt(base as never, signals)).toThrow(message);
  });
});
