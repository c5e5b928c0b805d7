// Reads a child's stdout as JSON lines: each complete non-empty line is parsed and handed to `onLine`.
import type { Readable } from 'node:stream';

export function readJsonLines(stream: Readable | null | undefined, onLine: (value: Record<string, any>) => void): void {
  let buffer = '';
  stream?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) onLine(JSON.parse(line) as Record<string, any>);
    }
  });
}
