/** Lambda: the HTTP publish API behind a Function URL (or API Gateway HTTP API). */
import config from '../../saga.config';
import { createPublishHandler } from './lib/publish-api';

export const handler = createPublishHandler(config);
