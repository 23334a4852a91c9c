/**
 * Cloudflare Worker entry (wrangler `main`): the example deployment of saga.config.ts.
 * Point this at your own config module to deploy yours. Secrets are Worker secrets
 * (`wrangler secret put NAME`), read by the names the config declares.
 */
import sagaConfig from '../../saga.config';
import { createWorker } from './create-worker';

export default createWorker(sagaConfig);
