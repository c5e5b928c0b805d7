// Makes a directory unwritable for the test process: chmod for a normal user, the immutable flag for root (which
// chmod does not stop). Returns the undo, or undefined when this machine cannot do either.
import { execFileSync } from 'node:child_process';
import { chmod, writeFile, rm } from 'node:fs/promises';
import path from 'node:path';

export async function makeReadOnly(dir: string): Promise<(() => Promise<void>) | undefined> {
  const root = process.getuid?.() === 0;
  try {
    if (root) execFileSync('chattr', ['+i', dir], { stdio: 'ignore' });
    else await chmod(dir, 0o500);
  } catch {
    return undefined;
  }
  const undo = async () => {
    if (root) execFileSync('chattr', ['-i', dir], { stdio: 'ignore' });
    else await chmod(dir, 0o700);
  };
  // Prove it: a write must now fail.
  const probe = path.join(dir, '.write-probe');
  try {
    await writeFile(probe, 'x');
    await rm(probe, { force: true });
    await undo();
    return undefined;
  } catch {
    return undo;
  }
}
