/**
 * The Chromium the browser suite drives with playwright-core (which downloads nothing):
 * `CHROMIUM_PATH` when set, else the system's `/usr/bin/chromium` when present, else the
 * build that `@sparticuz/chromium` ships inside its npm package — so `npm ci` is all a fresh
 * machine needs. The npm build is unpacked once per machine and version into
 * `$TMPDIR/saga-streams-chromium-<version>` (~200 MB, 3–4 s; later runs reuse it) together
 * with the shared libraries it needs that a bare Debian lacks (NSS, NSPR, expat: the
 * package's Amazon Linux set) and its fonts, so it runs with nothing installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';

export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** Headless as root (no sandbox), and nothing fetched from the network behind the test's back. */
const BASE_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

export interface ChosenBrowser {
  readonly executablePath: string;
  /** Where it came from, for the test's log line. */
  readonly source: 'CHROMIUM_PATH' | 'system' | 'npm';
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

export async function chooseChromium(env: NodeJS.ProcessEnv = process.env): Promise<ChosenBrowser> {
  const given = env.CHROMIUM_PATH;
  if (given) {
    if (!existsSync(given)) throw new Error(`CHROMIUM_PATH=${given}: no such file (unset it to use the system or the npm Chromium)`);
    return { executablePath: given, source: 'CHROMIUM_PATH', args: BASE_ARGS };
  }
  if (existsSync(SYSTEM_CHROMIUM)) return { executablePath: SYSTEM_CHROMIUM, source: 'system', args: BASE_ARGS };
  return npmChromium();
}

export async function launchChromium(): Promise<{ browser: Browser; chosen: ChosenBrowser }> {
  const chosen = await chooseChromium();
  const browser = await chromium.launch({
    executablePath: chosen.executablePath,
    headless: true,
    args: [...chosen.args],
    env: chosen.env ? { ...process.env, ...chosen.env } : undefined,
  });
  return { browser, chosen };
}

const requireHere = createRequire(import.meta.url);

function sparticuzRoot(): string {
  // build/cjs/index.cjs → the package folder (its package.json is not exported).
  return join(dirname(requireHere.resolve('@sparticuz/chromium')), '..', '..');
}

async function npmChromium(): Promise<ChosenBrowser> {
  const root = sparticuzRoot();
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const home = join(tmpdir(), `saga-streams-chromium-${version}`);
  if (!existsSync(join(home, 'chromium'))) await unpackInto(home, join(root, 'bin'));
  return {
    executablePath: join(home, 'chromium'),
    source: 'npm',
    args: [...BASE_ARGS, '--no-zygote'],
    env: { LD_LIBRARY_PATH: join(home, 'al2023', 'lib'), FONTCONFIG_PATH: join(home, 'fonts') },
  };
}

/**
 * Unpacks into a private folder, then renames it into place: a run that reads the folder never
 * sees a half-written binary, and of two runs unpacking at once one wins and the other's copy
 * is dropped.
 */
async function unpackInto(home: string, bin: string): Promise<void> {
  const staging = mkdtempSync(`${home}.unpacking-`);
  try {
    await unpackBrowser(staging);
    untarBrotli(join(bin, 'al2023.tar.br'), join(staging, 'al2023'));
    writeFileSync(join(staging, 'fonts', 'fonts.conf'), fontConfig(home));
    try {
      renameSync(staging, home);
    } catch (error) {
      if (!existsSync(join(home, 'chromium'))) throw error; // not another run's finished copy
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The package unpacks into `os.tmpdir()`: point that at `dir` while it does. */
async function unpackBrowser(dir: string): Promise<void> {
  const { default: sparticuz } = await import('@sparticuz/chromium');
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    const path = await sparticuz.executablePath();
    if (path !== join(dir, 'chromium')) throw new Error(`@sparticuz/chromium unpacked to ${path}, not into ${dir}`);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

/** The package's fonts.conf names Lambda's folders (/tmp/fonts); this one names where they are. */
function fontConfig(home: string): string {
  return `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(home, 'fonts', 'fonts')}</dir>\n  <cachedir>${join(home, 'fonts-cache')}</cachedir>\n</fontconfig>\n`;
}

/**
 * Through a file, not a pipe: GNU tar may exit at the end-of-archive blocks before reading the
 * record's padding, and a pipe into it then ends in "Premature close" (seen on a loaded machine).
 * `tar` is on every Debian; the archive (~3 MB unpacked) holds plain files under lib/.
 */
function untarBrotli(archive: string, into: string): void {
  mkdirSync(into, { recursive: true });
  const tarFile = join(into, 'archive.tar');
  writeFileSync(tarFile, brotliDecompressSync(readFileSync(archive)));
  const tar = spawnSync('tar', ['-x', '-f', tarFile, '-C', into], { encoding: 'utf8' });
  rmSync(tarFile);
  if (tar.status !== 0) throw new Error(`tar -x of ${archive} failed (exit ${tar.status}): ${tar.stderr || tar.error?.message}`);
}
