/** Lambda: poll the wake-up consumers an SQS batch names (partial batch response). */
import config from '../../saga.config';
import { createWakeUpPollHandler } from './lib/wake-up-poll';

export const handler = createWakeUpPollHandler(config);
