/**
 * saga-streams: the platform-free public API — what a deployment's author writes. It runs
 * in Node, Lambda and workerd. Platform entry points are subpaths: `saga-streams/node` (TCP
 * client, Node crypto), `saga-streams/aws` (Lambda handlers), `saga-streams/cloudflare`
 * (Worker), `saga-streams/cdk` (construct), `saga-streams/http` (publish app); the
 * plumbing underneath is `saga-streams/internal`. test/package/public-api.json lists every
 * name exported here, so the surface changes only on purpose.
 */

// A deployment: one config for every entry point (SPEC §11)
export { defineConfig } from './deployment/define-config';
export type { DeploymentConfig, ConsumerPlan, SigningRoute } from './deployment/define-config';
export type { DeploymentInput } from './deployment/schema';
export { commandConsumer, capabilityConsumer, resultConsumer, entryConsumer } from './deployment/consumers';
export type { ConsumerFactory, HandlerContext, PollerDeps } from './deployment/consumers';
export type { Postgres } from './deployment/postgres';
export { createRuntime } from './deployment/runtime';
export type { DeploymentRuntime, RuntimeOptions } from './deployment/runtime';
export { runPollJob, runTrimJob, wakeUpConsumers } from './deployment/jobs';
export type { Job, PollJobReport, TrimJobReport } from './deployment/jobs';
export { runLogLine } from './deployment/log';
export { connectRest } from './deployment/connect-rest';
export type { SecretEnv } from './deployment/secrets';

// Handler outcomes (SPEC §4)
export { Rejection, Deferral, DeferralDelayError, Verdicts } from './verdict/verdict';
export type { HandlerOutcome, RetainCause, Verdict } from './verdict/verdict';
export { CoreReasons } from './verdict/core-reasons';
export type { Delivery, DeliveryHandler, PayloadDecoder } from './consume/processor';
export { DeadLetterReasons } from './auth/reasons';
export type { DeadLetterReason } from './auth/reasons';
export type { DeliveryContext, EntryProcessor } from './consume/decide';
export type { StreamEntry } from './entry/entry';

// Errors: every one has a stable `code`
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
export { PublishError } from './publish/errors';
export type { PublishErrorCode } from './publish/errors';

// Building without a deployment config: a poller, a processor, a publisher
export { createPoller } from './consume/poller';
export type { Poller, PollerOptions } from './consume/poller';
export { createProcessor, jsonPayload, rawPayload, textPayload } from './consume/processor';
export type { ConsumerConfig, ConsumerConfigInput } from './consume/config';
export type { RoundReport, RunReport } from './consume/report';
export type { RunMode, RunOptions } from './consume/run';
export { createPublisher } from './publish/publisher';
export type { Publisher, PublisherOptions, PublishResult } from './publish/publisher';
export type { PublishEvent } from './publish/entry-fields';
export type { ScheduledState } from './publish/scheduled';
export type { ScheduleOptions } from './schedule/due-time';
export type { DurabilityInput } from './redis/durability';
export { SecretKey } from './auth/secret';
export type { KeyInput } from './auth/secret';
export type { StreamAuth, StreamAuthInput } from './auth/modes';
export { deriveStreamKeys } from './entry/keys';
export type { StreamKeys, StreamKeyOverrides } from './entry/keys';
export type { RedisPort } from './redis/port';

// Saga envelopes and consumers (SPEC §9)
export { encodeCommand, encodeResult } from './saga/envelopes';
export type { CommandEnvelope, ResultEnvelope } from './saga/envelopes';
export { createCommandConsumer, createCapabilityCommandConsumer } from './saga/command-consumer';
export type { CommandRoute, CapabilityRoute } from './saga/command-consumer';
export { createResultConsumer } from './saga/result-consumer';
export type { SagaDelivery, SagaHandler } from './saga/delivery';
export { instanceOrderingKey } from './saga/ordering';
export { stepTimeout, stepTimeoutRef, isStepTimeout } from './saga/timeouts';
export type { StepTimeout, StepTimeoutRef, StepTimeoutSpec, StepTimeoutTarget, TimedCommand } from './saga/timeouts';

// Operations: retention, redrive, probes (SPEC §7, §8)
export { runRetention } from './retention/run';
export type { RetentionReport } from './retention/run';
export { createRedriver } from './redrive/redrive';
export type { Redriver, RedriveOutcome, RedriveStatus } from './redrive/redrive';
export { listDeadLetters } from './redrive/list';
export type { DeadLetterQuery, DeadLetterPage } from './redrive/list';
export type { DeadLetterRecord } from './redrive/record';
export { probeBacklog } from './probes/backlog';
export type { Backlog, BacklogTarget } from './probes/backlog';
export { checkReadiness } from './probes/readiness';
export type { Readiness, ReadinessCheck } from './probes/readiness';

// Scheduled delivery: the schedule of a stream (SPEC §5.6)
export { moveDueEvents } from './schedule/move';
export type { MoveResult } from './schedule/move';
export { listScheduled } from './schedule/list';
export type { ScheduledEvent, ScheduledPage } from './schedule/list';
export { cancelScheduled } from './schedule/cancel';
export type { CancelOptions, CancelOutcome } from './schedule/cancel';
