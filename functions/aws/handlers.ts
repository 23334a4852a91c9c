/**
 * The Lambda handlers of this repository's example deployment (saga.config.ts): what a user
 * writes in their own project, `createLambdaHandlers` over their config module. The CDK
 * construct generates the same from the entry it is given (infra/aws/handler-file.ts).
 */
import config from '../../saga.config';
import { createLambdaHandlers } from './index';

export const { poll, trim, publish, wakeUp } = createLambdaHandlers(config);
