/**
 * What the server behind a port offers (SPEC §10: detect, never assume): its family and
 * version, whether it has `WAITAOF`, whether `XINFO CONSUMERS` reports `inactive`, whether
 * its AOF is on. Learned lazily — only when a feature that needs a fact is configured (a
 * durability wait) or a long-lived process starts — and once per port: one round trip
 * (`INFO server persistence` and `COMMAND INFO WAITAOF`), never a command in every run.
 *
 * Valkey answers `redis_version:7.2.4` (the Redis release it forked from) and names itself in
 * `server_name:valkey` / `valkey_version`; Redis 7.0 has neither line.
 */
import { RedisCommandError } from '../ground/errors';
import { command, type RedisPort, type RedisReply } from './port';
import { asText } from './reply';

export type ServerFamily = 'redis' | 'valkey';

export interface ServerCapabilities {
  readonly family: ServerFamily;
  /** The family's own version: `valkey_version` on Valkey, `redis_version` on Redis. */
  readonly version: string;
  /** `redis_version` as the server reports it (7.2.4 on every Valkey 8). */
  readonly redisVersion: string;
  /** `WAITAOF numlocal numreplicas timeout` exists (Redis ≥ 7.2, Valkey). */
  readonly waitAof: boolean;
  /**
   * `XINFO CONSUMERS` has `inactive` (time since the consumer's last successful read or
   * claim), and `idle` counts from its last attempt — an empty XREADGROUP resets it (Redis ≥
   * 7.2, Valkey). Without it (Redis 7.0) `idle` is the only clock and only a read that
   * returned something resets it.
   */
  readonly xinfoInactive: boolean;
  /** `appendonly yes` when this was learned (WAITAOF numlocal needs it). */
  readonly aofEnabled: boolean;
}

/** `family version`, e.g. `valkey 8.0.1`, for reports and errors. */
export function describeServer(capabilities: Pick<ServerCapabilities, 'family' | 'version'>): string {
  return `${capabilities.family} ${capabilities.version}`;
}

const known = new WeakMap<object, Promise<ServerCapabilities>>();

/**
 * The capabilities of the server behind `port`, learned on the first call and cached for the
 * life of the port object (pass the long-lived port, not a per-run wrapper). `via` sends the
 * detection through another port to the same server, e.g. one bounded by a deadline. A failed
 * detection is not cached: the next call asks again.
 */
export function serverCapabilities(port: RedisPort, options: { via?: RedisPort } = {}): Promise<ServerCapabilities> {
  let learning = known.get(port);
  if (learning === undefined) {
    learning = detect(options.via ?? port);
    known.set(port, learning);
    learning.catch(() => {
      if (known.get(port) === learning) known.delete(port);
    });
  }
  return learning;
}

async function detect(port: RedisPort): Promise<ServerCapabilities> {
  const [info, waitAof] = await port.exchange([command('INFO', 'server', 'persistence'), command('COMMAND', 'INFO', 'WAITAOF')]);
  if (info instanceof RedisCommandError) throw info;
  return capabilitiesOf(parseInfo(asText(info, 'INFO reply')), commandExists(waitAof));
}

/**
 * `COMMAND INFO name` answers `[null]` for a command the server does not know. An error
 * reply (COMMAND renamed away, an ACL without it) tells nothing: undefined, and the version
 * decides.
 */
function commandExists(reply: RedisReply | RedisCommandError | undefined): boolean | undefined {
  if (!Array.isArray(reply) || reply.length !== 1) return undefined;
  return reply[0] !== null;
}

/** INFO's `field:value` lines (section headers and blank lines skipped). */
export function parseInfo(text: string): ReadonlyMap<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/** The capabilities an INFO reply implies; `waitAofCommand` is what COMMAND INFO said, when it said anything. */
export function capabilitiesOf(info: ReadonlyMap<string, string>, waitAofCommand?: boolean): ServerCapabilities {
  const redisVersion = info.get('redis_version') ?? '0.0.0';
  const valkeyVersion = info.get('valkey_version');
  const family: ServerFamily = valkeyVersion !== undefined || info.get('server_name') === 'valkey' ? 'valkey' : 'redis';
  // Every Valkey forked from Redis 7.2.4, which had both.
  const since72 = family === 'valkey' || atLeast(redisVersion, [7, 2]);
  return {
    family,
    version: valkeyVersion ?? redisVersion,
    redisVersion,
    waitAof: waitAofCommand ?? since72,
    xinfoInactive: since72,
    aofEnabled: info.get('aof_enabled') === '1',
  };
}

function atLeast(version: string, [major, minor]: [number, number]): boolean {
  const [m = 0, n = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  return m > major || (m === major && n >= minor);
}
