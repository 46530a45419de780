import { parseCliArgs, UsageError } from './cli-args';

describe('parseCliArgs', () => {
  it.each<[string[], ReturnType<typeof parseCliArgs>]>([
    [[], { kind: 'stdio' }],
    [['--http', '8931'], { kind: 'http', port: 8931 }],
    [['--http=0'], { kind: 'http', port: 0 }],
    [['--help'], { kind: 'help' }],
    [['-h', '--http', '1'], { kind: 'help' }],
    [['-v'], { kind: 'version' }],
  ])('%j → %j', (argv, command) => {
    expect(parseCliArgs(argv)).toEqual(command);
  });

  it.each([
    [['--http']],
    [['--http', '65536']],
    [['--http', '-1']],
    [['--http', 'eighty']],
    [['--port', '1']],
    [['serve']],
  ])('refuses %j', (argv) => {
    expect(() => parseCliArgs(argv)).toThrow(UsageError);
  });
});
