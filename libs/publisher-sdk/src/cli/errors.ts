/** A failure the user can fix (not logged in, unreadable file): printed as is, exit code 1. */
export class CliError extends Error {
  override name = 'CliError';
}

/** Wrong command line: printed with a pointer to --help, exit code 2. */
export class UsageError extends CliError {
  override name = 'UsageError';
  constructor(
    message: string,
    /** The command whose help to point at, e.g. "sites create". */
    readonly command?: string,
  ) {
    super(message);
  }
}
