/** Lambda: safe trim, DLT retention and reaper on a schedule, plus backlog metrics per consumer. */
import config from '../../saga.config';
import { createTrimHandler } from './lib/scheduled-trim';

export const handler = createTrimHandler(config);
