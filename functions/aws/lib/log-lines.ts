/**
 * Log lines for what a run report cannot say: a run that refused to start or failed. The
 * shape is the shared one (src/deployment/log-line.ts), the same on every platform.
 */
export { failureLine as problemLine, type FailureContext as LineContext } from '../../../src/deployment/log-line';
