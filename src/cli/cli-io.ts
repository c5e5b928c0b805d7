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
  /** Whether standard input is a terminal (a person typing: input is read without echo, prompts are shown). */
  readonly stdinIsTTY?: boolean;
  /**
   * Reads one line from standard input (`login --token -`). On a terminal, `prompt` is shown once echo is off,
   * and nothing typed or pasted is echoed. Absent when there is no input to read.
   */
  readLine?(prompt?: string): Promise<string>;
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
  get stdinIsTTY() {
    return process.stdin.isTTY === true;
  },
  readLine: (prompt) => (process.stdin.isTTY ? readHiddenLine(process.stdin, (text) => void process.stderr.write(text), prompt) : readStdinLine(process.stdin)),
};

/** Raised when the person presses Ctrl+C (`interrupted`) or Ctrl+D at a hidden prompt. */
export class InputAborted extends Error {
  override readonly name = 'InputAborted';
  constructor(
    message: string,
    readonly interrupted = false,
  ) {
    super(message);
  }
}

/**
 * Reads one line from a terminal in raw mode, so the terminal never echoes it (a token stays off the screen and
 * out of scroll-back). Enter ends the line, Backspace deletes, Ctrl+C / Ctrl+D abort with InputAborted; escape
 * sequences (arrow keys, bracketed paste markers) are dropped. `echo` receives the prompt (only after the terminal
 * stopped echoing, so nothing typed right after it shows) and the final newline.
 */
export function readHiddenLine(
  stream: Pick<NodeJS.ReadStream, 'setRawMode' | 'on' | 'off' | 'resume' | 'pause' | 'setEncoding'>,
  echo: (text: string) => void,
  prompt = '',
): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const finish = (error?: Error) => {
      stream.off('data', onData);
      stream.setRawMode(false);
      stream.pause();
      echo('\n');
      if (error) reject(error);
      else resolve(text);
    };
    const onData = (chunk: string | Buffer) => {
      // eslint-disable-next-line no-control-regex
      const input = chunk.toString().replace(/\u001b\[[0-9;]*[~A-Za-z]|\u001b[O][A-Za-z]/g, '');
      for (const ch of input) {
        if (ch === '\r' || ch === '\n') {
          if (text.trim() === '') continue;
          return finish();
        }
        if (ch === '\u0003') return finish(new InputAborted('interrupted', true));
        if (ch === '\u0004') return finish(new InputAborted('input aborted'));
        if (ch === '\u007f' || ch === '\b') text = [...text].slice(0, -1).join('');
        // eslint-disable-next-line no-control-regex
        else if (!/[\u0000-\u001f]/.test(ch)) text += ch;
      }
    };
    stream.setEncoding('utf8');
    stream.setRawMode(true);
    if (prompt) echo(prompt);
    stream.on('data', onData);
    stream.resume();
  });
}

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
