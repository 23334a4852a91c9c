// Stands in for the `debug` package in Lambda bundles (infra/aws/handler-file.ts,
// bundleAliases): ioredis logs through it only under DEBUG=ioredis:*, and the real package
// (with supports-color and ms) costs every cold start 4.8 KiB gzip of the poll bundle. Every
// logger it makes is off; the product's own run log is unaffected.
'use strict';
function off(namespace) {
  const logger = () => {};
  logger.namespace = namespace;
  logger.enabled = false;
  logger.log = () => {};
  logger.destroy = () => false;
  logger.extend = (suffix) => off(`${namespace}:${suffix}`);
  return logger;
}
off.enable = () => {};
off.disable = () => '';
off.enabled = () => false;
module.exports = off;
module.exports.default = off;
