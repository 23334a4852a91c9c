/**
 * Cloudflare Worker entry (wrangler `main`) of this repository's example deployment
 * (saga.config.ts): what a user writes in their own project, `createWorker` over their
 * config module. Secrets are Worker secrets (`wrangler secret put NAME`), read by the names
 * the config declares.
 */
import sagaConfig from '../../saga.config';
import { createWorker } from './index';

export default createWorker(sagaConfig);
