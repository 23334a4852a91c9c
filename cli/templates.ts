/**
 * What `saga-streams init` writes: a project that depends on saga-streams (the spec
 * init-dependency.ts chose), with one deployment config, one handler with its test (`npm test`
 * passes out of the box), the deploy files of the chosen platform, and a README that says
 * where the dependency comes from.
 */
export type Platform = 'aws' | 'cloudflare';
export const PLATFORMS: readonly Platform[] = ['aws', 'cloudflare'];

/** Pinned tool versions that run on Node 20 (see the saga-streams README). */
const TOOLS = { tsx: '4.23.15', typescript: '6.0.3', '@types/node': '20.19.43', 'aws-cdk-lib': '2.276.0', constructs: '10.8.1', 'aws-cdk': '2.1148.1', wrangler: '4.86.0' };

export interface TemplateInput {
  readonly name: string;
  readonly platform: Platform;
  /** The saga-streams version init comes with. */
  readonly version: string;
  /** The saga-streams dependency: its spec, whether the registry serves it, and where it comes from in words. */
  readonly dependency: { readonly spec: string; readonly fromRegistry: boolean; readonly origin: string };
}

function packageJson({ name, platform, dependency }: TemplateInput): string {
  const deploy = platform === 'aws' ? { deploy: 'cdk deploy', synth: 'cdk synth' } : { deploy: `npx --yes wrangler@${TOOLS.wrangler} deploy`, dev: `npx --yes wrangler@${TOOLS.wrangler} dev` };
  const platformDev = platform === 'aws' ? { 'aws-cdk-lib': TOOLS['aws-cdk-lib'], constructs: TOOLS.constructs, 'aws-cdk': TOOLS['aws-cdk'] } : {};
  return JSON.stringify(
    {
      name,
      version: '0.1.0',
      private: true,
      type: 'module',
      // `exec`: the shell gives way to the stack, so the SIGINT/SIGTERM npm passes on reaches it.
      scripts: { test: 'tsx --test test/*.test.ts', start: 'exec saga-streams dev --no-demo', ...deploy },
      dependencies: { 'saga-streams': dependency.spec },
      devDependencies: { tsx: TOOLS.tsx, ...platformDev },
    },
    null,
    2,
  );
}

const HANDLER = `/** The business step: one order placed → fulfil it. Throw Rejection for input that can never succeed. */
import { Rejection } from 'saga-streams';

export interface Order {
  readonly orderId: string;
  readonly items: number;
}

export const fulfilled: string[] = [];

export async function fulfilOrder(order: Order): Promise<void> {
  if (!Number.isInteger(order.items) || order.items < 1) throw new Rejection('invalid_order');
  fulfilled.push(order.orderId);
}
`;

function config(name: string): string {
  return `/**
 * The deployment: every entry point (CLI, Lambda, Worker, CDK) reads this one module.
 * Secrets are environment variable NAMES; values come from the environment / secret store.
 *   REDIS_URL                       TCP Redis (CLI, local stack, Lambda)
 *   UPSTASH_REDIS_REST_URL/_TOKEN   REST Redis (Cloudflare Worker)
 *   ORDERS_SIGNING_KEY              HMAC key of the shop producer (hex:…, base64:… or text, ≥ 16 bytes)
 *   SHOP_PRODUCER_TOKEN             bearer token of the shop on the publish API
 */
import { defineConfig, entryConsumer } from 'saga-streams';
import { fulfilOrder, type Order } from './handler';

export const ORDERS = '${name}:{orders}:placed';

export default defineConfig({
  name: ${JSON.stringify(name)},
  redis: {
    tcp: { urlEnv: 'REDIS_URL' },
    rest: { urlEnv: 'UPSTASH_REDIS_REST_URL', tokenEnv: 'UPSTASH_REDIS_REST_TOKEN' },
  },
  streams: {
    [ORDERS]: { keyTag: 'orders', auth: { mode: 'hmac', keyId: 'shop-1', keyEnv: 'ORDERS_SIGNING_KEY', producer: 'shop' } },
  },
  routes: { 'order.placed': ORDERS },
  consumers: {
    fulfilment: {
      stream: ORDERS,
      group: 'fulfilment',
      schedule: '* * * * *',
      settings: { runBudgetMs: 20_000, minIdleMs: 60_000 },
      handler: entryConsumer(({ payload }) => fulfilOrder(JSON.parse(new TextDecoder().decode(payload)) as Order)),
    },
  },
  publishApi: { producers: { shop: { tokenEnv: 'SHOP_PRODUCER_TOKEN', eventTypes: ['order.placed'] } } },
  trim: { schedule: '*/15 * * * *' },
});
`;
}

const TEST = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rejection } from 'saga-streams';
import config, { ORDERS } from '../src/saga';
import { fulfilOrder, fulfilled } from '../src/handler';

test('the config is valid: one consumer of the orders stream', () => {
  assert.deepEqual([...config.consumers.keys()], ['fulfilment']);
  assert.equal(config.consumers.get('fulfilment')?.config.keys.stream, ORDERS);
});

test('a valid order is fulfilled', async () => {
  await fulfilOrder({ orderId: 'o-1', items: 2 });
  assert.ok(fulfilled.includes('o-1'));
});

test('an order that can never succeed is rejected (dead-lettered, not retried)', async () => {
  await assert.rejects(fulfilOrder({ orderId: 'o-2', items: 0 }), Rejection);
});
`;

const AWS_APP = `/** CDK app: \`npm run deploy\`. The construct reads the config from src/saga.ts and bundles it. */
import { App, Stack } from 'aws-cdk-lib';
import { SagaStreams } from 'saga-streams/cdk';

const app = new App();
const stack = new Stack(app, 'SagaStreams', { env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } });
// Secrets default to Secrets Manager secrets named <deployment>/<VARIABLE>; override with \`secrets\`.
new SagaStreams(stack, 'Orders', { entry: 'src/saga.ts' });
`;

const CDK_JSON = JSON.stringify({ app: 'npx tsx infra/app.ts', output: 'cdk.out' }, null, 2);

const WORKER = `/** The Cloudflare Worker (wrangler \`main\`): publish API, cron polls and trim, wake-ups. */
import { createWorker } from 'saga-streams/cloudflare';
import config from './saga';

export default createWorker(config);
`;

/** The wrangler config of the template config (what `saga-streams wrangler --main src/worker.ts` prints for it). */
function wrangler(name: string): string {
  return [
    `# Generated by saga-streams from the deployment config "${name}"; regenerate after changing it.`,
    `name = ${JSON.stringify(name)}`,
    'main = "src/worker.ts"',
    'compatibility_date = "2026-04-26"',
    '',
    '[observability]',
    'enabled = true',
    '',
    '[triggers]',
    'crons = ["* * * * *", "*/15 * * * *"]',
    '',
    '[secrets]',
    'required = ["ORDERS_SIGNING_KEY", "SHOP_PRODUCER_TOKEN", "UPSTASH_REDIS_REST_TOKEN", "UPSTASH_REDIS_REST_URL"]',
    '',
  ].join('\n');
}

/** Where saga-streams comes from, said once in init's output and in the README. */
export function dependencyNote({ version, dependency }: TemplateInput, code = (text: string) => text): string | undefined {
  if (dependency.fromRegistry) return undefined;
  return (
    `saga-streams ${version} is not on the npm registry yet, so ${code('package.json')} depends on ${code(dependency.spec)} ` +
    `(${dependency.origin}). Once it is published, change that to ${code(`"^${version}"`)} and run ${code('npm install')}.`
  );
}

function readme(input: TemplateInput): string {
  const note = dependencyNote(input, (text) => `\`${text}\``);
  const deploy =
    input.platform === 'aws'
      ? 'npm run deploy     # cdk deploy: the functions, schedules and wake-up queue of src/saga.ts (secrets in Secrets Manager)'
      : 'npm run deploy     # wrangler deploy: the Worker of src/worker.ts (set the [secrets] of wrangler.toml first)';
  return `# ${input.name}

A saga-streams deployment (${input.platform}), made by \`saga-streams init\`: the config in
\`src/saga.ts\`, the handler in \`src/handler.ts\` with its test in \`test/handler.test.ts\`.

## The saga-streams dependency

${note ?? `\`package.json\` depends on saga-streams \`${input.dependency.spec}\` from the npm registry.`}

## Commands

\`\`\`sh
npm install
npm test           # the handler's tests (node:test through tsx)
npm start          # the local stack: a private redis-server (or REDIS_URL), the publish API, polls on
                   # emulated schedules; Ctrl-C, or SIGINT/SIGTERM to npm, stops all of it
${deploy}
\`\`\`

\`npx saga-streams --help\` lists the CLI (publish, poll, backlog, dead letters); next to a running
\`npm start\` it finds the stack's Redis and secrets by itself.
`;
}

export function projectFiles(input: TemplateInput): Record<string, string> {
  const files: Record<string, string> = {
    'README.md': readme(input),
    'package.json': `${packageJson(input)}\n`,
    'tsconfig.json': `${JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', strict: true, skipLibCheck: true, noEmit: true, types: ['node'] }, include: ['src', 'test', 'infra'] }, null, 2)}\n`,
    '.gitignore': 'node_modules/\ncdk.out/\n.wrangler/\n.saga-streams/\n.dev.vars\n',
    'saga.config.ts': `/** The CLI's default config path: the deployment lives in src/saga.ts. */\nexport { default } from './src/saga';\n`,
    'src/saga.ts': config(input.name),
    'src/handler.ts': HANDLER,
    'test/handler.test.ts': TEST,
  };
  if (input.platform === 'aws') {
    files['infra/app.ts'] = AWS_APP;
    files['cdk.json'] = `${CDK_JSON}\n`;
  } else {
    files['src/worker.ts'] = WORKER;
    files['wrangler.toml'] = wrangler(input.name);
  }
  return files;
}
