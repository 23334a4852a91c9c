/**
 * Running Lua scripts: the single EVALSHA → NOSCRIPT → EVAL fallback for every client.
 * Scripts may share a round trip with plain commands; the fallback re-sends only the
 * scripts Redis did not know, in one more exchange.
 */
import { RedisCommandError } from '../ground/errors';
import type { RedisArg, RedisCommand, RedisPort, RedisReply } from './port';

export interface LuaScript {
  readonly name: string;
  readonly sha1: string;
  readonly text: string;
}

export interface ScriptCall {
  readonly script: LuaScript;
  readonly keys: readonly string[];
  readonly args: readonly RedisArg[];
}

export type Operation = RedisCommand | ScriptCall;

function isScriptCall(op: Operation): op is ScriptCall {
  return 'script' in op;
}

function evalCommand(call: ScriptCall, bySha: boolean): RedisCommand {
  return {
    name: bySha ? 'EVALSHA' : 'EVAL',
    args: [bySha ? call.script.sha1 : call.script.text, call.keys.length, ...call.keys, ...call.args],
  };
}

function toCommand(op: Operation): RedisCommand {
  return isScriptCall(op) ? evalCommand(op, true) : op;
}

function isNoScript(reply: RedisReply | RedisCommandError): reply is RedisCommandError {
  return reply instanceof RedisCommandError && reply.replyCode === 'NOSCRIPT';
}

/**
 * Runs the operations in one round trip (two when a script must be loaded) and returns
 * every reply, an error reply in its slot (script errors name the script). For callers
 * that must act on the replies that did succeed, e.g. a claim sent beside a failed settle.
 * `after` are commands that must follow every write of the exchange (a durability wait:
 * WAIT/WAITAOF cover the connection's writes sent before them); their replies come last, and
 * they are sent again behind the scripts a NOSCRIPT made re-send.
 */
export async function runOperationsSettled(
  port: RedisPort,
  ops: readonly Operation[],
  after: readonly RedisCommand[] = [],
): Promise<Array<RedisReply | RedisCommandError>> {
  const replies = await port.exchange([...ops.map(toCommand), ...after]);
  const missing = ops.flatMap((op, i) => (isScriptCall(op) && isNoScript(replies[i]!) ? [i] : []));
  if (missing.length > 0) {
    const retried = await port.exchange([...missing.map((i) => evalCommand(ops[i] as ScriptCall, false)), ...after]);
    missing.forEach((slot, j) => {
      replies[slot] = retried[j]!;
    });
    after.forEach((_, j) => {
      replies[ops.length + j] = retried[missing.length + j]!;
    });
  }
  return replies.map((reply, i) => {
    const op = ops[i];
    if (reply instanceof RedisCommandError && op !== undefined && isScriptCall(op)) return new RedisCommandError(`script ${op.script.name}`, reply.reply, { cause: reply });
    return reply;
  });
}

/** Like runOperationsSettled, but throws the first error reply. */
export async function runOperations(port: RedisPort, ops: readonly Operation[]): Promise<RedisReply[]> {
  return (await runOperationsSettled(port, ops)).map(throwIfError);
}

export function throwIfError(reply: RedisReply | RedisCommandError): RedisReply {
  if (reply instanceof RedisCommandError) throw reply;
  return reply;
}

export async function runScript(port: RedisPort, call: ScriptCall): Promise<RedisReply> {
  const [reply] = await runOperations(port, [call]);
  return reply ?? null;
}

export async function runCommand(port: RedisPort, cmd: RedisCommand): Promise<RedisReply> {
  const [reply] = await runOperations(port, [cmd]);
  return reply ?? null;
}
