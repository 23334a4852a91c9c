/** The ioredis client of the raw loops: one server, or a Cluster when the job names its nodes. */
import { Cluster, Redis } from 'ioredis';
import type { StreamParams } from './types';

export type RawClient = Redis | Cluster;

export function openRawClient(params: StreamParams): RawClient {
  return params.clusterNodes ? new Cluster([...params.clusterNodes]) : new Redis(params.redisUrl);
}
