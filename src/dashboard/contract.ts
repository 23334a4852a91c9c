/**
 * The seam between the dashboard's shell (admin auth, layout, overview, runs) and its
 * sections (DLT browser, find by id, saga view, scheduled events). A section is a Hono
 * sub-app built over the deployment runtime; the shell mounts it behind the admin token and
 * gives it the layout, so a section never sees a credential and never renders a page frame
 * of its own.
 */
import type { Hono } from 'hono';
import type { DeploymentRuntime } from '../deployment/runtime';

export interface DashboardContext {
  /** The deployment's config and Redis port (sections read and redrive through it). */
  readonly runtime: DeploymentRuntime;
  /** Wraps an HTML body fragment (already escaped) in the dashboard's page frame. */
  readonly page: (title: string, body: string) => string;
  readonly now: () => number;
}

/** Mounted by the shell at `/ops/<name>`; links inside a section are relative to that base. */
export type DashboardSection = (ctx: DashboardContext) => Hono;
