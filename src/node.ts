/** Node-only additions (TCP client): `import { connectIoredis } from 'saga-streams/node'`. */
export { connectIoredis, connectIoredisCluster, ioredisPort, IOREDIS_DEFAULTS } from './redis/ioredis-port';
export { connectTcp } from './deployment/connect-tcp';
export { nodeHmac } from './node/crypto';
