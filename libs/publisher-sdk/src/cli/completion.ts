import { GLOBAL_OPTIONS, type Command, type OptionSpec } from './command';

/*
 * Shell completion scripts, written from the command table so they never drift from it: command
 * words, each command's options, and the words a first argument takes (`completion bash`).
 * Site ids and files are left to the shell's default (file names).
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export function completionScript(shell: Shell, commands: Command[]): string {
  if (shell === 'fish') return fishScript(commands);
  const bash = bashScript(commands);
  // zsh runs bash completion functions through its bashcompinit layer.
  return shell === 'zsh'
    ? `# crawlgate completion for zsh: eval "$(crawlgate completion zsh)" in ~/.zshrc\nautoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n${bash}`
    : bash;
}

function optionEntries(options: OptionSpec): [string, OptionSpec[string]][] {
  return Object.entries(options);
}

function optionWords(options: OptionSpec): string[] {
  return optionEntries({ ...options, ...GLOBAL_OPTIONS }).flatMap(([name, spec]) => [
    `--${name}`,
    ...(spec.short ? [`-${spec.short}`] : []),
  ]);
}

/** First words, and the second words of each group ("sites" → create, list, …). */
function tree(commands: Command[]): { top: string[]; groups: Map<string, Command[]> } {
  const groups = new Map<string, Command[]>();
  const top: string[] = [];
  for (const command of commands) {
    const [first, second] = command.name.split(' ');
    if (!top.includes(first)) top.push(first);
    if (second !== undefined) groups.set(first, [...(groups.get(first) ?? []), command]);
  }
  return { top, groups };
}

function bashScript(commands: Command[]): string {
  const { top, groups } = tree(commands);
  const quote = (words: string[]) => `"${words.join(' ')}"`;
  // Where the command's own arguments start: after one word, or two for a group's command.
  const cases = commands.map((command) => {
    const depth = command.name.split(' ').length;
    const choices = command.choices
      ? `[ "$COMP_CWORD" -eq ${depth + 1} ] && [[ "$cur" != -* ]] && words=${quote(command.choices)}`
      : ':';
    return `    "${command.name}") options=${quote(optionWords(command.options))}; ${choices} ;;`;
  });
  const groupCases = [...groups].map(
    ([group, members]) =>
      `    ${group}) [ "$COMP_CWORD" -eq 2 ] && words=${quote(members.map((c) => c.name.split(' ')[1]))} ;;`,
  );
  return `# crawlgate completion for bash: eval "$(crawlgate completion bash)" in ~/.bashrc
_crawlgate() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words="" options="" name
  if [ "$COMP_CWORD" -eq 1 ]; then
    words=${quote(top)}
  else
    case "\${COMP_WORDS[1]}" in
${groupCases.join('\n')}
    esac
    name="\${COMP_WORDS[1]}"
    case "$name \${COMP_WORDS[2]}" in
${commands
  .filter((c) => c.name.includes(' '))
  .map((c) => `      "${c.name}") name="${c.name}" ;;`)
  .join('\n')}
    esac
    case "$name" in
${cases.map((line) => `  ${line}`).join('\n')}
    esac
    [[ "$cur" == -* ]] && words="$options"
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _crawlgate crawlgate
`;
}

function fishScript(commands: Command[]): string {
  const { groups } = tree(commands);
  const say = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const lines = [
    '# crawlgate completion for fish: crawlgate completion fish > ~/.config/fish/completions/crawlgate.fish',
    'complete -c crawlgate -e',
  ];
  for (const [name, spec] of optionEntries(GLOBAL_OPTIONS))
    lines.push(
      `complete -c crawlgate -l ${name}${spec.short ? ` -s ${spec.short}` : ''}${spec.type === 'string' ? ' -r' : ''}`,
    );
  const seenTop = new Set<string>();
  for (const command of commands) {
    const [first, second] = command.name.split(' ');
    if (!seenTop.has(first)) {
      seenTop.add(first);
      const members = groups.get(first);
      const description = members ? members.map((c) => c.name.split(' ')[1]).join(', ') : command.summary;
      lines.push(`complete -c crawlgate -f -n __fish_use_subcommand -a ${first} -d ${say(description)}`);
    }
    let condition = `__fish_seen_subcommand_from ${first}`;
    if (second !== undefined) {
      const siblings = groups.get(first)!.map((c) => c.name.split(' ')[1]);
      lines.push(
        `complete -c crawlgate -f -n ${say(`${condition}; and not __fish_seen_subcommand_from ${siblings.join(' ')}`)} -a ${second} -d ${say(command.summary)}`,
      );
      condition = `${condition}; and __fish_seen_subcommand_from ${second}`;
    }
    if (command.choices)
      lines.push(`complete -c crawlgate -f -n ${say(condition)} -a ${say(command.choices.join(' '))}`);
    for (const [name, spec] of optionEntries(command.options)) {
      lines.push(
        `complete -c crawlgate -n ${say(condition)} -l ${name}${spec.short ? ` -s ${spec.short}` : ''}${spec.type === 'string' ? ' -r' : ''}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
