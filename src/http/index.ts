/**
 * `saga-streams/http`: the Hono publish app (SPEC §6.2) for hosting it yourself (Node,
 * Bun, any fetch runtime), with its problem responses.
 */
export { createPublishApp } from './app';
export type { PublishAppOptions } from './app';
export { Problems, problemResponse, PROBLEM_CONTENT_TYPE, RETRY_AFTER_SECONDS } from '../web/problems';
export type { ProblemCode } from '../web/problems';
