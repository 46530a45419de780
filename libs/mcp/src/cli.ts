#!/usr/bin/env node
/*
 * crawlgate-mcp: the MCP server as a process. MCP on stdin/stdout by default (stdout is the
 * protocol's, so everything for the operator goes to stderr), or streamable HTTP on 127.0.0.1.
 */

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { parseCliArgs, USAGE, UsageError } from './cli-args';
import { ConfigError, readConfig, VERSION, type Env, type McpConfig } from './config';
import { startHttpServer } from './http';
import { createMcpServer } from './server';
import { createWalletSession, describeSession } from './session';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** A server that is up; `stdio` says whether its host is at the other end of stdin. */
export interface Running {
  stdio: boolean;
  close(): Promise<void>;
  /** Settles once no tool call is paying (PaymentLedger.idle). */
  idle(): Promise<void>;
}

/**
 * How long a stop waits for tool calls still paying: a payment that left is followed to its
 * answer, whose token the next session would otherwise pay for again. Hosts kill sooner, some.
 */
export const STOP_GRACE_MS = 30_000;

const PROCESS_IO: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/**
 * Starts the server as the command line says. Resolves to an exit code when there is nothing to
 * serve (help, version, a refusal to start), or to the running server.
 */
export async function main(argv: readonly string[], env: Env, io: CliIo = PROCESS_IO): Promise<number | Running> {
  let command: ReturnType<typeof parseCliArgs>;
  try {
    command = parseCliArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`crawlgate-mcp: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (command.kind === 'help' || command.kind === 'version') {
    io.stdout(command.kind === 'help' ? USAGE : `${VERSION}\n`);
    return 0;
  }

  let session: ReturnType<typeof createWalletSession>;
  let config: McpConfig;
  try {
    config = readConfig(env);
    session = createWalletSession(config, { log: (line) => io.stderr(`${line}\n`) });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(`${error.message}\n\nRun crawlgate-mcp --help for the settings.\n`);
    return 2;
  }
  // Read once; gone from process.env so nothing this process runs later can read or print them
  // (the RPC URL may hold the node's API key). The process's initial environment keeps them.
  delete env.CRAWLGATE_WALLET_KEY;
  delete env.CRAWLGATE_RPC_URL;
  delete env.CRAWLGATE_HTTP_TOKEN;
  for (const name of config.unknownSettings)
    session.log(`crawlgate-mcp: ${name} is none of its settings and is ignored (crawlgate-mcp --help lists them)`);

  try {
    if (command.kind === 'http') {
      const http = await startHttpServer(session, { port: command.port, token: config.httpToken });
      // A token it made is shown once, here: the host must send it. One the environment gave is not repeated.
      const bearer = config.httpToken === undefined ? `; send "Authorization: Bearer ${http.token}"` : '';
      session.log(`${describeSession(session)}; MCP over HTTP at ${http.url}${bearer}`);
      return { stdio: false, close: http.close, idle: () => session.ledger.idle() };
    }
    const server = createMcpServer(session);
    await server.connect(new StdioServerTransport());
    session.log(`${describeSession(session)}; MCP on stdio`);
    return { stdio: true, close: () => server.close(), idle: () => session.ledger.idle() };
  } catch (error) {
    session.log(`crawlgate-mcp: could not start: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

// Run when executed as the binary; stay inert when imported.
if (require.main === module) {
  main(process.argv.slice(2), process.env).then(
    (running) => {
      if (typeof running === 'number') {
        process.exitCode = running;
        return;
      }
      const grace = () => new Promise<void>((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
      const stop = () =>
        void Promise.race([running.idle(), grace()])
          .then(() => running.close())
          .finally(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      // The host closing our stdin is the end of a stdio session.
      if (running.stdio) process.stdin.once('end', stop);
    },
    (error: unknown) => {
      process.stderr.write(`crawlgate-mcp: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
