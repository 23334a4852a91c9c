/**
 * The generated handler of each function role names a factory `saga-streams/aws` exports,
 * and that of a shared poll function the relay rule (input `{"job": "relay"}`) also targets
 * runs the relay on that input instead of refusing it as naming no consumer.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as aws from '../../functions/aws/index';
import { FUNCTION_ROLES } from '../../functions/aws/lib/roles';
import { writeHandlerFile } from '../../infra/aws/handler-file';
import { uniquePrefix } from '../support/redis';
import { deployment, harness, lambdaContext } from './fixtures';

const root = mkdtempSync(join(tmpdir(), 'handler-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function factoryOf(role: (typeof FUNCTION_ROLES)[number], runsRelay = false): string {
  const file = writeHandlerFile({ entry: '/project/src/saga.ts', exportName: 'default', role, projectRoot: root, runtimeModule: 'saga-streams/aws', runsRelay });
  return readFileSync(file, 'utf8').match(/import \{ (\w+) as createHandler \}/)![1]!;
}

describe('generated Lambda handlers', () => {
  it('name an exported factory for every role', () => {
    for (const role of FUNCTION_ROLES) expect(typeof (aws as Record<string, unknown>)[factoryOf(role)]).toBe('function');
    expect(typeof (aws as Record<string, unknown>)[factoryOf('poll', true)]).toBe('function');
  });

  it('the factory of a poll function that also runs the relay runs it on {"job": "relay"}', async () => {
    const factory = (aws as unknown as Record<string, typeof aws.createPollFunctionHandler>)[factoryOf('poll', true)]!;
    const run = harness();
    const handler = factory(deployment(uniquePrefix()), run.deps);
    // The fixture deployment has no database: the relay runs and fails for that reason, in its own line.
    await expect(handler({ job: 'relay' } as never, lambdaContext(60_000))).rejects.not.toThrow('names no consumer');
    expect(run.logged()).toEqual([expect.objectContaining({ msg: 'relay run failed', job: 'relay' })]);
    await run.close();
  });
});
