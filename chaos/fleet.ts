/**
 * The poll processes of a scenario: the child bundled once with esbuild into one file (plain
 * node, like a deployed function, and a fast restart), spawned per slot, SIGKILLed and restarted at
 * will. It collects every run's START/RUN line for the deadline invariant (I6) and notices
 * a child that died on its own (a crash the product must not cause).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { removeFolder, trackChild, trackFolder } from './cleanup';
import { HMAC_KEY_ENV, type ChildConfig, type EarlyAckLine, type RunLine, type StartLine } from './child-config';
import type { FlowCommitLine, FlowEndLine, FlowStartLine } from './flow-check';

const here = dirname(fileURLToPath(import.meta.url));

export interface ChildBundle {
  readonly file: string;
  cleanup(): void;
}

export async function bundleChild(): Promise<ChildBundle> {
  mkdirSync(join(here, '.build'), { recursive: true });
  const dir = trackFolder(mkdtempSync(join(here, '.build', 'child-')));
  const file = join(dir, 'child.cjs');
  await bundleInto(file).catch((error: unknown) => {
    removeFolder(dir);
    throw error;
  });
  return { file, cleanup: () => removeFolder(dir) };
}

async function bundleInto(file: string): Promise<void> {
  await build({
    entryPoints: [join(here, 'child.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    // Everything in one CommonJS file: a restart loads one file instead of walking
    // node_modules (a third of the start-up CPU), and restart time is time out of the fault.
    format: 'cjs',
    target: 'node20',
    external: ['pg-native'],
    logLevel: 'error',
  });
}

export interface FleetEvents {
  onRun(line: RunLine): void;
  onStart(line: StartLine): void;
  onEarlyAck(line: EarlyAckLine): void;
  /** A handler of an entry with a flow key started / ended (I9). */
  onFlowStart(line: FlowStartLine): void;
  onFlowEnd(line: FlowEndLine): void;
  /** A handler of an entry with a flow key committed (I10). */
  onFlowCommit(line: FlowCommitLine): void;
  /** A child exited without being killed by the harness. */
  onCrash(slot: string, pid: number | undefined, code: number | null, signal: string | null, stderr: string): void;
  /** A child is gone (killed at `at`, or exited then) and every line it wrote has been read. */
  onGone(pid: number | undefined, at: number): void;
}

interface Slot {
  readonly name: string;
  readonly config: ChildConfig;
  child: ChildProcess | undefined;
  killedByUs: boolean;
  /** When the harness sent the current process its SIGKILL. */
  killedAt: number | undefined;
  /** The current process has started a run (it is past start-up). */
  live: boolean;
}

export class Fleet {
  readonly #bundle: string;
  readonly #key: string;
  readonly #events: FleetEvents;
  readonly #slots = new Map<string, Slot>();
  /** Every process not yet closed (its output included), whichever slot it was started for. */
  readonly #open = new Map<ChildProcess, Promise<void>>();
  #stopped = false;
  kills = 0;
  spawns = 0;

  constructor(bundle: string, key: string, events: FleetEvents) {
    this.#bundle = bundle;
    this.#key = key;
    this.#events = events;
  }

  get slotNames(): string[] {
    return [...this.#slots.keys()];
  }

  /** Slots whose process is past start-up and running: the ones a kill hits mid-work. */
  get liveSlots(): string[] {
    return [...this.#slots.values()].filter((slot) => slot.live && slot.child).map((slot) => slot.name);
  }

  add(name: string, config: ChildConfig): void {
    const slot: Slot = { name, config, child: undefined, killedByUs: false, killedAt: undefined, live: false };
    this.#slots.set(name, slot);
    this.#start(slot);
  }

  #start(slot: Slot): void {
    if (this.#stopped) return;
    slot.killedByUs = false;
    slot.killedAt = undefined;
    slot.live = false;
    const child = trackChild(
      spawn(process.execPath, [this.#bundle, JSON.stringify(slot.config)], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, [HMAC_KEY_ENV]: this.#key },
      }),
    );
    this.spawns += 1;
    slot.child = child;
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      let nl: number;
      while ((nl = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line.startsWith('RUN ')) this.#events.onRun(JSON.parse(line.slice(4)) as RunLine);
        else if (line.startsWith('EARLY_ACK ')) this.#events.onEarlyAck(JSON.parse(line.slice(10)) as EarlyAckLine);
        else if (line.startsWith('FLOW_START ')) this.#events.onFlowStart(JSON.parse(line.slice(11)) as FlowStartLine);
        else if (line.startsWith('FLOW_END ')) this.#events.onFlowEnd(JSON.parse(line.slice(9)) as FlowEndLine);
        else if (line.startsWith('FLOW_COMMIT ')) this.#events.onFlowCommit(JSON.parse(line.slice(12)) as FlowCommitLine);
        else if (line.startsWith('START ')) {
          // A START still in the pipe when the harness killed the process makes it live no more.
          if (slot.child === child && !slot.killedByUs) slot.live = true;
          this.#events.onStart(JSON.parse(line.slice(6)) as StartLine);
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString()).slice(-4_000);
    });
    let goneAt: number | undefined;
    child.on('exit', (code, signal) => {
      goneAt = slot.killedAt ?? Date.now();
      if (slot.child === child) slot.child = undefined;
      if (!slot.killedByUs && !this.#stopped) {
        this.#events.onCrash(slot.name, child.pid, code, signal, err);
        // Keep the slot's work going: a crashed process is restarted like a killed one.
        setTimeout(() => this.#start(slot), 100);
      }
    });
    // After 'exit' and the end of its stdout: no line of this process is still in the pipe.
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    this.#open.set(child, closed);
    void closed.then(() => {
      this.#open.delete(child);
      this.#events.onGone(child.pid, goneAt ?? Date.now());
    });
  }

  /** SIGKILLs the slot's process (if running) and starts a new one after `restartAfterMs`. */
  killAndRestart(name: string, restartAfterMs = 0): number | undefined {
    const slot = this.#slots.get(name)!;
    const child = slot.child;
    // Killed once already and not yet exited: a second kill would restart the slot twice.
    if (!child || child.exitCode !== null || slot.killedByUs) return undefined;
    slot.killedByUs = true;
    slot.killedAt = Date.now();
    slot.live = false;
    const pid = child.pid;
    child.kill('SIGKILL');
    this.kills += 1;
    child.once('exit', () => setTimeout(() => this.#start(slot), restartAfterMs));
    return pid;
  }

  /** SIGKILLs every process and resolves once each has closed its output (all its lines read). */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const slot of this.#slots.values()) {
      if (slot.child && !slot.killedByUs) {
        slot.killedByUs = true;
        slot.killedAt = Date.now();
      }
    }
    // Every process, not only each slot's current one: none may outlive the fleet.
    for (const child of this.#open.keys()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(this.#open.values());
  }
}
