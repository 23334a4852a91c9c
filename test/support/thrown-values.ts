/** Values a handler might throw that nothing can inspect, for the SPEC §4 row about them. */

/** Thrown values nothing can read: every way of touching them throws. */
export function uninspectableValues(): Array<[string, unknown]> {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const revokedRejection = Proxy.revocable(new Error('x'), {});
  revokedRejection.revoke();
  const trapping = new Proxy({}, {
    get() {
      throw new Error('get trap');
    },
    has() {
      throw new Error('has trap');
    },
    getPrototypeOf() {
      throw new Error('getPrototypeOf trap');
    },
  });
  return [
    ['an object whose code getter throws', { get code(): string { throw new Error('code getter'); } }],
    ['an object whose name getter throws', { get name(): string { throw new Error('name getter'); }, message: 'm' }],
    ['a Rejection-like object whose reason getter throws', { code: 'REJECTION', get reason(): string { throw new Error('reason getter'); } }],
    ['a revoked Proxy', revoked.proxy],
    ['a revoked Proxy of an Error', revokedRejection.proxy],
    ['a Proxy whose traps throw', trapping],
    ['an object whose Symbol.toPrimitive throws', { [Symbol.toPrimitive]() { throw new Error('toPrimitive'); } }],
    ['null', null],
    ['undefined', undefined],
  ];
}
