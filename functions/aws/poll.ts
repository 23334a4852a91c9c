/**
 * Lambda: poll one consumer on its EventBridge schedule (the rule's input names the
 * consumer), or run the outbox relay when the input is `{"job": "relay"}`.
 */
import type { Context } from 'aws-lambda';
import config from '../../saga.config';
import { createScheduledPollHandler, type ScheduledPollEvent } from './lib/scheduled-poll';
import { createScheduledRelayHandler, isRelayEvent } from './lib/scheduled-relay';

const poll = createScheduledPollHandler(config);
const relay = createScheduledRelayHandler(config);

export const handler = (event: ScheduledPollEvent, context: Context) => (isRelayEvent(event) ? relay(event, context) : poll(event, context));
