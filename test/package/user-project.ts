/** The files of a small user project written against the installed package (pack.test.ts). */
export function userProjectFiles(prefix: string): Record<string, string> {
  const stream = `${prefix}:{orders}:placed`;
  return {
    'package.json': JSON.stringify({ name: 'user-project', version: '0.0.0', private: true, type: 'module' }, null, 2),
    'tsconfig.json': JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
      include: ['src'],
    }),
    'src/saga.ts': `import { defineConfig, entryConsumer, Rejection, type HandlerOutcome } from 'saga-streams';

interface Order { readonly orderId: string; readonly items: number }

function fulfil(order: Order): HandlerOutcome | void {
  if (order.items < 1) throw new Rejection('invalid_order');
}

export default defineConfig({
  name: 'user-shop',
  redis: { tcp: { urlEnv: 'REDIS_URL' }, rest: { urlEnv: 'UPSTASH_REDIS_REST_URL', tokenEnv: 'UPSTASH_REDIS_REST_TOKEN' } },
  streams: { ${JSON.stringify(stream)}: { keyTag: 'orders', auth: { mode: 'hmac', keyId: 'shop-1', keyEnv: 'ORDERS_SIGNING_KEY', producer: 'shop' } } },
  routes: { 'order.placed': ${JSON.stringify(stream)} },
  consumers: {
    fulfilment: {
      stream: ${JSON.stringify(stream)},
      group: 'fulfilment',
      schedule: '* * * * *',
      settings: { runBudgetMs: 5_000, minIdleMs: 60_000 },
      handler: entryConsumer(({ payload }) => fulfil(JSON.parse(new TextDecoder().decode(payload)) as Order)),
    },
  },
  publishApi: { producers: { shop: { tokenEnv: 'SHOP_PRODUCER_TOKEN', eventTypes: ['order.placed'] } } },
  trim: { schedule: '*/15 * * * *' },
});
`,
    'src/lambda.ts': `import { createLambdaHandlers } from 'saga-streams/aws';
import config from './saga.js';

export const { poll, trim, publish, wakeUp } = createLambdaHandlers(config);
`,
    'src/worker.ts': `import { createWorker } from 'saga-streams/cloudflare';
import config from './saga.js';

export default createWorker(config);
`,
    'synth.mjs': `import { App, Stack } from 'aws-cdk-lib';
import { SagaStreams } from 'saga-streams/cdk';

const app = new App({ outdir: process.env.CDK_OUTDIR });
const stack = new Stack(app, 'UserShop');
const saga = new SagaStreams(stack, 'Orders', { entry: 'src/saga.ts' });
const assembly = app.synth();
console.log(JSON.stringify({ functions: Object.keys(saga.functions).sort(), directory: assembly.directory }));
`,
  };
}
