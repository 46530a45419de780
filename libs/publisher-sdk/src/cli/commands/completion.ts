import type { Command } from '../command';
import { completionScript, SHELLS, type Shell } from '../completion';
import { UsageError } from '../errors';

/** Built from the command table it completes, which includes itself. */
export function completionCommand(commands: () => Command[]): Command {
  return {
    name: 'completion',
    usage: '<bash|zsh|fish>',
    summary: 'Print a shell completion script',
    help: [
      'bash: eval "$(crawlgate completion bash)"   (in ~/.bashrc)',
      'zsh:  eval "$(crawlgate completion zsh)"    (in ~/.zshrc)',
      'fish: crawlgate completion fish > ~/.config/fish/completions/crawlgate.fish',
    ].join('\n'),
    options: {},
    positionals: ['shell'],
    choices: [...SHELLS],
    async run(input) {
      const shell = input.args[0];
      if (!(SHELLS as readonly string[]).includes(shell))
        throw new UsageError(`Unknown shell ${JSON.stringify(shell)}: bash, zsh or fish`, 'completion');
      input.io.stdout(completionScript(shell as Shell, commands()));
    },
  };
}
