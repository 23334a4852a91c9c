/** Lambda: poll one consumer on its EventBridge schedule (the rule's input names the consumer). */
import config from '../../saga.config';
import { createScheduledPollHandler } from './lib/scheduled-poll';

export const handler = createScheduledPollHandler(config);
