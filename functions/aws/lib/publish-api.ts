/**
 * The publish API on Lambda: the Hono app (src/http/app.ts) through Hono's Lambda adapter,
 * for Function URL and API Gateway HTTP API (payload 2.0) events. Secrets are resolved and
 * the app built once per container; its publishers send SQS wake-ups.
 */
import type { APIGatewayProxyEventV2, Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { handle, type LambdaContext, type LambdaEvent } from 'hono/aws-lambda';
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { createPublishApp } from '../../../src/http/app';
import { lambdaContainer, onceUntilFailure } from './container';
import { withDefaults, type LambdaDeps } from './deps';
import { problemLine } from './log-lines';

export type PublishRequestEvent = LambdaFunctionURLEvent | APIGatewayProxyEventV2;

/** Kept as a name for callers; wake-ups are wired in the container (LambdaDeps.sqs). */
export type PublishDeps = LambdaDeps;

export function createPublishHandler(config: DeploymentConfig, deps: PublishDeps = {}) {
  const resolved = withDefaults(deps);
  const start = lambdaContainer(config, resolved, 'publish');
  const serve = onceUntilFailure(async () => {
    // The runtime's publishers send the wake-ups (see container.ts), so the app needs none.
    const { runtime, env } = await start();
    return handle(createPublishApp({ runtime, env, now: resolved.now, log: resolved.log }));
  });

  return async (event: PublishRequestEvent, context: Context) => {
    const handler = await serve().catch((error: unknown) => {
      resolved.log(problemLine({ deployment: config.name, job: 'publish', now: resolved.now }, error));
      throw error;
    });
    // @types/aws-lambda and Hono describe the same payload-2.0 event with types that do not unify.
    return handler(event as unknown as LambdaEvent, context as unknown as LambdaContext);
  };
}
