/**
 * The commit ledger: where a handler's commit lands, outside the Redis under test. One
 * append-only file per poll process; a handler's commit is a line written with one
 * O_APPEND write, and the handler returns only once that line is durable:
 * - `write`: in the kernel's page cache, which survives the death of the writing process
 *   (the fault every scenario injects; the harness never crashes the machine);
 * - `fsync`: also flushed to disk (fdatasync), group-committed: every line written while a
 *   flush is running waits for the next one, as a database's commit does.
 * The harness reads the files incrementally, by offset, and only whole lines.
 */
import { closeSync, fdatasync, openSync, readSync, writeSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export type LedgerSync = 'write' | 'fsync';

export interface Commit {
  readonly group: string;
  readonly entryId: string;
  readonly eventId: string;
}

export class LedgerWriter {
  readonly #fd: number;
  readonly #sync: LedgerSync;
  #waiting: Array<() => void> = [];
  #flushing = false;

  constructor(file: string, sync: LedgerSync) {
    this.#fd = openSync(file, 'a');
    this.#sync = sync;
  }

  /** Resolves once the commit is durable (see the module comment). */
  commit(commit: Commit): Promise<void> {
    writeSync(this.#fd, `${commit.group}\t${commit.entryId}\t${commit.eventId}\t${process.pid}\n`);
    if (this.#sync === 'write') return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      if (!this.#flushing) this.#flush();
    });
  }

  #flush(): void {
    this.#flushing = true;
    const batch = this.#waiting;
    this.#waiting = [];
    fdatasync(this.#fd, () => {
      for (const resolve of batch) resolve();
      this.#flushing = false;
      if (this.#waiting.length > 0) this.#flush();
    });
  }
}

const READ_CHUNK = 1 << 20;

/** Reads every ledger file of a directory from where it left off. */
export class LedgerReader {
  readonly #dir: string;
  readonly #offsets = new Map<string, number>();
  readonly #partial = new Map<string, string>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The commits appended since the last call (whole lines only). */
  readNew(): Commit[] {
    if (!existsSync(this.#dir)) return [];
    const commits: Commit[] = [];
    for (const name of readdirSync(this.#dir)) {
      if (!name.endsWith('.ledger')) continue;
      const file = join(this.#dir, name);
      const fd = openSync(file, 'r');
      try {
        let offset = this.#offsets.get(file) ?? 0;
        let text = this.#partial.get(file) ?? '';
        const buffer = Buffer.alloc(READ_CHUNK);
        for (;;) {
          const n = readSync(fd, buffer, 0, READ_CHUNK, offset);
          if (n === 0) break;
          offset += n;
          text += buffer.toString('utf8', 0, n);
        }
        this.#offsets.set(file, offset);
        const end = text.lastIndexOf('\n');
        this.#partial.set(file, text.slice(end + 1));
        if (end < 0) continue;
        for (const line of text.slice(0, end).split('\n')) {
          const [group, entryId, eventId] = line.split('\t');
          if (group && entryId && eventId) commits.push({ group, entryId, eventId });
        }
      } finally {
        closeSync(fd);
      }
    }
    return commits;
  }
}
