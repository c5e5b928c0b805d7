// Output channels of the CLI, so commands can be run in tests without a real terminal.
import { UsageError } from './cli-args';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Stops the command with a one-line usage error (exit code 2). */
  fail(message: string): never;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  fail: (message) => {
    throw new UsageError(message);
  },
};
