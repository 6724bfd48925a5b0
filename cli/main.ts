/**
 * `rollout-fleet <subcommand>`: one entry point dispatching to the packages. Each subcommand lives in
 * cli/commands/<name>.ts, imports its package lazily (so `--help` stays fast) and returns an exit code.
 */
import { Command } from 'commander';
import { EXIT } from './exit-codes.js';
import { registerApi } from './commands/api.js';
import { registerSandboxHost } from './commands/sandbox-host.js';
import { registerDashboard } from './commands/dashboard.js';
import { registerDoctor } from './commands/doctor.js';
import { registerImages } from './commands/images.js';
import { registerRenderImages } from './commands/render-images.js';
import { registerResults } from './commands/results.js';
import { registerRunAdmin } from './commands/run-admin.js';
import { registerSubmit } from './commands/submit.js';
import { registerVerify } from './commands/verify.js';
import { registerWorker } from './commands/worker.js';

export function buildProgram(): Command {
  const program = new Command('rollout-fleet')
    .description('Replay and grade SWE-bench-style episodes on a fleet of veFaaS sandboxes.')
    .showHelpAfterError()
    .exitOverride();
  // Subcommands register here, one line each.
  registerSubmit(program);
  registerRunAdmin(program);
  registerResults(program);
  registerWorker(program);
  registerVerify(program);
  registerDoctor(program);
  registerRenderImages(program);
  registerImages(program);
  registerDashboard(program);
  registerApi(program);
  registerSandboxHost(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
  } catch (err) {
    const code = (err as { code?: string; exitCode?: number }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return EXIT.OK;
    if (typeof code === 'string' && code.startsWith('commander.')) return EXIT.USAGE;
    throw err;
  }
}

// A reader that stops early (`rollout-fleet results | head`) closes the pipe: stop quietly, as Unix tools do,
// instead of an unhandled EPIPE stack trace. Nothing the command still had to say has anyone to read it.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(EXIT.OK);
  throw err;
});

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = EXIT.FAILURE;
  },
);
