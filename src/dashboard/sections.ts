/**
 * The dashboard's sections (contract.ts), mounted by the shell at `/ops/<name>` with a nav
 * link each. Listed here so the publish API on every platform serves the same set.
 */
import type { DashboardSection } from './contract';

export interface SectionEntry {
  /** Path segment under the dashboard: `/ops/<name>`. */
  readonly name: string;
  /** The nav link's text. */
  readonly title: string;
  readonly section: DashboardSection;
}

export const DASHBOARD_SECTIONS: readonly SectionEntry[] = [];
