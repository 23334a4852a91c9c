/**
 * Files that hold secrets (the dev file, a Worker's .dev.vars): written whole under a
 * temporary name at 0600, then renamed over the target. Writing in place would put the
 * secrets into an existing file first and fix its mode after — a window in which a file
 * someone left world-readable is readable with the new secrets in it — and a reader could
 * see half a file.
 */
import { chmodSync, renameSync, rmSync, writeFileSync } from 'node:fs';

export function writePrivateFile(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  // Created fresh ('wx'): a leftover of a crash, or a planted symlink, is removed, never written through.
  rmSync(temporary, { force: true });
  writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
  // The mode option is masked by the umask: set it outright.
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}
