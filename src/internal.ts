/**
 * `saga-streams/internal`: the building blocks under the public API — the Redis port and
 * its plumbing, zod schemas, signing internals, record codecs, key derivation. Stable enough
 * to build adapters on, but not the surface most users need (that is `saga-streams`), and
 * it may change in a minor release.
 */

// Core: config, round, run loop, verdicts
export { parseConsumerConfig, consumerConfigSchema, MAX_ROUND_WORK_MS } from './consume/config';
export type { ConsumerConfig, ConsumerConfigInput } from './consume/config';
export type { DeliveryContext, EntryProcessor } from './consume/decide';
export { Fields, fieldText, entryIdMillis } from './entry/entry';
export type { StreamEntry } from './entry/entry';
export {
  SagaStreamsError,
  ConfigError,
  RedisUnavailableError,
  RedisCommandError,
  ReplyShapeError,
  RunDeadlineTooCloseError,
  errorCode,
} from './ground/errors';
export type { ConfigProblem, ErrorCode } from './ground/errors';
export { ensureGroup } from './consume/groups';
export type { EnsureGroupResult } from './consume/groups';
export { deriveStreamKeys, isValidKeyName, isValidEventId } from './entry/keys';
export { hashTagOf } from './entry/hash-tag';
export type { StreamKeys, StreamKeyOverrides } from './entry/keys';
export { createPoller } from './consume/poller';
export { assertSingleSlot } from './entry/assert-single-slot';
export type { Poller, PollerOptions } from './consume/poller';
export { createProcessor, jsonPayload, rawPayload, textPayload, checkRequiredFields } from './consume/processor';
export { CoreReasons } from './verdict/core-reasons';
export type { Delivery, DeliveryHandler, PayloadDecoder } from './consume/processor';
export type { RoundReport, RunReport } from './consume/report';
export { MIN_HANDLER_WINDOW_MS } from './consume/run';
export type { RunMode, RunOptions } from './consume/run';
export { Rejection, Deferral, DeferralDelayError, MAX_RETRY_DELAY_MS, Verdicts, verdictOfThrown, isValidReason } from './verdict/verdict';
export { retryAfterMs } from './consume/retry';
export type { RetryPolicy } from './consume/retry';
export type { HandlerOutcome, RetainCause, Verdict } from './verdict/verdict';

// Redis port (both clients share it) and the REST client
export { describeServer, serverCapabilities } from './redis/capabilities';
export type { ServerCapabilities, ServerFamily } from './redis/capabilities';
export { durabilitySchema } from './redis/durability';
export type { Durability, DurabilityInput } from './redis/durability';
export { meterPort } from './redis/metered';
export type { MeteredPort } from './redis/metered';
export { command } from './redis/port';
export type { RedisArg, RedisCommand, RedisPort, RedisReply, Transport } from './redis/port';
export { runCommand, runOperations, runScript } from './redis/script';
export type { LuaScript, Operation, ScriptCall } from './redis/script';
export { connectUpstash, RestBlockingCommandError } from './redis/upstash-port';
export type { UpstashConnection } from './redis/upstash-port';
export { assertFieldsFitTransport, RestPayloadNotUtf8Error } from './redis/utf8';
export { isWellFormedUtf8 } from './ground/text';

// Signed entries (SPEC §3.2)
export { SecretKey, REDACTED } from './auth/secret';
export type { KeyInput } from './auth/secret';
export { parseStreamAuth, checkStreamAuth, describeAuth, streamAuthSchema, MIN_KEY_BYTES } from './auth/modes';
export type { StreamAuth, StreamAuthInput, HmacAuth, KeyringAuth, ExclusiveStreamAuth, VerificationKey } from './auth/modes';
export { canonicalMessage } from './auth/canonical';
export { webCryptoHmac } from './auth/hmac';
export type { HmacEngine } from './auth/hmac';
export type { SignedFields } from './auth/canonical';
export { signEntry, verifyEntry, SIGNATURE_BYTES } from './auth/signature';
export { constantTimeEqual } from './auth/constant-time';
export { createOriginVerifier, signedFieldsOf } from './admission/verifier';
export type { OriginCheck } from './admission/verifier';
export { createSignedProcessor } from './admission/signed-processor';
export type { SignedDelivery } from './admission/signed-processor';
export { DeadLetterReasons } from './auth/reasons';
export type { DeadLetterReason } from './auth/reasons';

// Publishing (SPEC §6.1)
export { createPublisher } from './publish/publisher';
export type { Publisher, PublisherOptions, PublishResult } from './publish/publisher';
export type { PublishEvent } from './publish/entry-fields';
export { PublishError } from './publish/errors';
export type { PublishErrorCode } from './publish/errors';
export { publisherDuplicateHintsTotal } from './publish/hints';
export { parsePublisherConfig, publisherConfigSchema, DEFAULT_DEDUPE_WINDOW_SECONDS, DEFAULT_PUBLISH_TIMEOUT_MS, MAX_PUBLISH_BATCH } from './publish/config';
export { parseTraceparent, isValidTraceparent } from './telemetry/traceparent';
export type { TraceContext } from './telemetry/traceparent';

// Saga envelopes and consumers (SPEC §9)
export { commandEnvelopeSchema, resultEnvelopeSchema, encodeCommand, encodeResult } from './saga/envelopes';
export type { CommandEnvelope, ResultEnvelope } from './saga/envelopes';
export { createCommandConsumer, createCapabilityCommandConsumer } from './saga/command-consumer';
export type { CommandRoute, CapabilityRoute } from './saga/command-consumer';
export { createResultConsumer } from './saga/result-consumer';
export type { SagaDelivery, SagaHandler } from './saga/delivery';
export { instanceOrderingKey } from './saga/ordering';

// Retention, redrive, probes (SPEC §7, §8)
export { parseRetentionConfig, retentionConfigSchema } from './retention/config';
export type { RetentionConfig, RetentionConfigInput } from './retention/config';
export { safeTrim } from './retention/trim';
export type { TrimResult, TrimStatus } from './retention/trim';
export { trimDeadLetters } from './retention/dead-letters';
export { reapConsumers } from './retention/reaper';
export type { ReapResult } from './retention/reaper';
export { runRetention } from './retention/run';
export type { RetentionReport } from './retention/run';
export { createRedriver, REDRIVE_BATCH } from './redrive/redrive';
export type { Redriver, RedriveOutcome, RedriveStatus } from './redrive/redrive';
export { listDeadLetters, DEFAULT_SCAN_LIMIT, MAX_SCAN_LIMIT } from './redrive/list';
export type { DeadLetterQuery, DeadLetterPage } from './redrive/list';
export { parseDeadLetterRecord, originalEntry, DeadLetterFields, ORIGINAL_FIELD_PREFIX } from './redrive/record';
export type { DeadLetterRecord, OriginalForm, UnrestorableReason } from './redrive/record';
export { probeBacklog } from './probes/backlog';
export type { Backlog, BacklogTarget } from './probes/backlog';
export { checkReadiness } from './probes/readiness';
export type { Readiness, ReadinessCheck } from './probes/readiness';

// HTTP publish API (SPEC §6.2): a Hono app for Node, Lambda and Workers
export { createPublishApp } from './http/app';
export type { PublishAppOptions } from './http/app';
export { Problems, problemResponse, PROBLEM_CONTENT_TYPE, RETRY_AFTER_SECONDS } from './web/problems';
export type { ProblemCode } from './web/problems';
export { wakeUpMessageFor, parseWakeUpMessage, consumersToWake } from './deployment/wake-up';
export type { WakeUpMessage } from './deployment/wake-up';

// Deployments: one config for every entry point (SPEC §11)
export { defineConfig } from './deployment/define-config';
export type { DeploymentConfig, ConsumerPlan, SigningRoute } from './deployment/define-config';
export type { DeploymentInput } from './deployment/schema';
export { commandConsumer, capabilityConsumer, resultConsumer, entryConsumer } from './deployment/consumers';
export type { ConsumerFactory, HandlerContext, PollerDeps } from './deployment/consumers';
export { createRuntime } from './deployment/runtime';
export type { DeploymentRuntime, RuntimeOptions } from './deployment/runtime';
export { runPollJob, runTrimJob, wakeUpConsumers } from './deployment/jobs';
export { jobsForCron } from './deployment/cron-jobs';
export type { Job, PollJobReport, TrimJobReport } from './deployment/jobs';
export { runLogLine, METRIC_NAMESPACE } from './deployment/log';
export { connectRest } from './deployment/connect-rest';
export { toEventBridgeCron, toCloudflareCron, isCronExpression } from './deployment/cron';
export { parseSchedule, type Schedule } from './deployment/schedule';
export { scheduleFiresAt } from './deployment/schedule-clock';
export { readSecrets, parseSecretKey } from './deployment/secrets';
