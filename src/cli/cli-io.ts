// Output channels of the CLI, so commands can be run in tests without a real terminal.
import { UsageError } from './cli-args';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Stops the command with a one-line usage error (exit code 2). */
  fail(message: string): never;
  /** Whether stdout is a terminal (colours are used only then). */
  readonly stdoutIsTTY?: boolean;
  /** Whether stderr is a terminal (progress text is redrawn in place only then). */
  readonly stderrIsTTY?: boolean;
  /** Reads one line from standard input (`login --token -`); absent when there is no input to read. */
  readLine?(): Promise<string>;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  fail: (message) => {
    throw new UsageError(message);
  },
  get stdoutIsTTY() {
    return process.stdout.isTTY === true;
  },
  get stderrIsTTY() {
    return process.stderr.isTTY === true;
  },
  readLine: () => readStdinLine(process.stdin),
};

/** Reads up to the first newline (or the end of input) and stops reading, so a pipe or a terminal both work. */
export function readStdinLine(stream: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      // Nothing else reads stdin: let go of it, or an open pipe would keep the process alive.
      stream.pause();
      stream.destroy();
    };
    const onData = (chunk: string | Buffer) => {
      text += chunk.toString();
      const newline = text.search(/\r?\n/);
      if (newline >= 0 && text.slice(0, newline).trim() !== '') {
        cleanup();
        resolve(text.slice(0, newline));
      }
    };
    const onEnd = () => {
      cleanup();
      resolve(text);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    stream.setEncoding('utf8');
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.resume();
  });
}
