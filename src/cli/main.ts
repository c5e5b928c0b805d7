#!/usr/bin/env node
// Entry of the `dida-todo` executable.
import { main } from './cli';
import { installInterruptHandler } from './cli-interrupt';

// A reader that goes away early (`dida-todo status | head -1`) ends the command quietly, without a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

// Ctrl+C exits 130 at once, after any save of files that belong together; nothing is left half-written.
installInterruptHandler();

process.exitCode = await main(process.argv.slice(2));
