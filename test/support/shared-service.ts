/**
 * One instance of a service per test run, however many vitest projects' global setups ask
 * for it (the Redis servers, the PostgreSQL server). Those setups run one after another in
 * vitest's main process — one module copy per project, but one `globalThis` — so a count kept
 * there decides who starts a service and who, releasing it last, stops it.
 */
export interface Service<T> {
  readonly value: T;
  stop(): Promise<void>;
}

interface Held {
  readonly service: Promise<Service<unknown>>;
  users: number;
}

const REGISTRY = Symbol.for('saga-streams.test.shared-services');

function registry(): Map<string, Held> {
  const global = globalThis as { [REGISTRY]?: Map<string, Held> };
  return (global[REGISTRY] ??= new Map());
}

/** The running `name` service, started by `start` if no setup holds it yet; `release()` once done. */
export async function acquire<T>(name: string, start: () => Promise<Service<T>>): Promise<{ value: T; release(): Promise<void> }> {
  const services = registry();
  let held = services.get(name);
  if (!held) {
    held = { service: start(), users: 0 };
    services.set(name, held);
    held.service.catch(() => services.delete(name));
  }
  held.users += 1;
  const service = (await held.service) as Service<T>;
  const mine = held;
  let released = false;
  return {
    value: service.value,
    async release() {
      if (released) return;
      released = true;
      mine.users -= 1;
      if (mine.users > 0) return;
      services.delete(name);
      await service.stop();
    },
  };
}
