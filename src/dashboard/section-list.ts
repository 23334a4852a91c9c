/**
 * The dashboard's sections (contract.ts), in nav order: the shell mounts each at
 * `/ops/<name>` behind the admin gate, with a nav link. Listed here so the publish API on
 * every platform serves the same set.
 */
import type { DashboardSection } from './contract';
import { dataSections } from './sections/index';

export interface SectionEntry {
  /** Path segment under the dashboard: `/ops/<name>`. */
  readonly name: string;
  /** The nav link's text. */
  readonly title: string;
  readonly section: DashboardSection;
}

export const DASHBOARD_SECTIONS: readonly SectionEntry[] = [
  { name: 'dlt', title: 'Dead letters', section: dataSections.dlt },
  { name: 'find', title: 'Find by id', section: dataSections.find },
  { name: 'saga', title: 'Saga', section: dataSections.saga },
  { name: 'schedule', title: 'Scheduled', section: dataSections.schedule },
];
