/** `wrangler --main <worker module>`: prints the wrangler.toml of the loaded config. */
import { wranglerToml } from '../../functions/cloudflare/wrangler-toml';
import type { CommandContext } from '../context';
import { UsageError } from '../exit-codes';

export async function wranglerCommand(ctx: CommandContext): Promise<void> {
  if (ctx.args.positionals.length > 0) throw new UsageError('wrangler takes no arguments');
  const main = ctx.args.string('main') ?? 'src/worker.ts';
  ctx.io.out(wranglerToml(ctx.loaded.config, { main, queueName: ctx.args.string('queue') }).trimEnd());
}
