/**
 * Node's native HMAC-SHA256 as an HmacEngine. Node-only (node:crypto), so it is exported
 * from `saga-streams/node` and installed by Node entry points with `useNodeCrypto()`.
 * Produces exactly the Web Crypto bytes (the signature vectors run on both engines).
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { setHmacEngine, type HmacEngine } from '../auth/hmac';
import type { SecretKey } from '../auth/secret';

/** Slot under which each SecretKey caches its KeyObject. */
const KEY_OBJECT = {};

function keyObjectOf(key: SecretKey): KeyObject {
  return key.derive(KEY_OBJECT, (bytes) => createSecretKey(bytes));
}

function mac(key: SecretKey, message: Uint8Array): Uint8Array {
  return createHmac('sha256', keyObjectOf(key)).update(message).digest();
}

export const nodeHmac: HmacEngine = {
  name: 'node',
  mac,
  verify(key, message, expected) {
    const actual = mac(key, message);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  },
};

/** Installs the native engine for this process. */
export function useNodeCrypto(): void {
  setHmacEngine(nodeHmac);
}
