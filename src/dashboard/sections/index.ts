/** The data sections, by the name the shell mounts each under (`/ops/<name>`). */
import type { DashboardSection } from '../contract';
import { deadLetterSection } from './dlt';
import { findSection } from './find';
import { sagaSection } from './saga';
import { scheduleSection } from './schedule';

export const dataSections: Readonly<Record<'dlt' | 'find' | 'saga' | 'schedule', DashboardSection>> = Object.freeze({
  dlt: deadLetterSection,
  find: findSection,
  saga: sagaSection,
  schedule: scheduleSection,
});
