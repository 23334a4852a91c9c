/** saga-streams: the public API, exported by name. */
export { parseConsumerConfig, consumerConfigSchema, MAX_ROUND_WORK_MS } from './config';
export type { ConsumerConfig, ConsumerConfigInput } from './config';
export type { DeliveryContext, EntryProcessor } from './decide';
export { Fields, fieldText, entryIdMillis } from './entry';
export type { StreamEntry } from './entry';
export {
  SagaStreamsError,
  ConfigError,
  RedisUnavailableError,
  RedisCommandError,
  ReplyShapeError,
  RunDeadlineTooCloseError,
  errorCode,
} from './errors';
export type { ConfigProblem, ErrorCode } from './errors';
export { ensureGroup } from './groups';
export type { EnsureGroupResult } from './groups';
export { deriveStreamKeys, hashTagOf, isValidKeyName, isValidEventId } from './keys';
export type { StreamKeys, StreamKeyOverrides } from './keys';
export { createPoller, assertSingleSlot } from './poller';
export type { Poller, PollerOptions } from './poller';
export { createProcessor, jsonPayload, rawPayload, checkRequiredFields, CoreReasons } from './processor';
export type { Delivery, DeliveryHandler, PayloadDecoder } from './processor';
export { connectIoredis, connectIoredisCluster, ioredisPort } from './redis/ioredis-port';
export { meterPort } from './redis/metered';
export type { MeteredPort } from './redis/metered';
export { command } from './redis/port';
export type { RedisArg, RedisCommand, RedisPort, RedisReply, Transport } from './redis/port';
export { runCommand, runOperations, runScript } from './redis/script';
export type { LuaScript, Operation, ScriptCall } from './redis/script';
export type { RoundReport, RunReport } from './report';
export { MIN_HANDLER_WINDOW_MS } from './run';
export type { RunMode, RunOptions } from './run';
export { Rejection, Deferral, Verdicts, verdictOfThrown, isValidReason } from './verdict';
export type { HandlerOutcome, RetainCause, Verdict } from './verdict';
