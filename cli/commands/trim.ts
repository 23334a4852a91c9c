/** `trim`: safe trim of every consumed stream, DLT retention and the consumer reaper. */
import { runTrimJob } from '../../src/deployment/jobs';
import { runLogLine } from '../../src/deployment/log';
import type { CommandContext } from '../context';
import { UsageError } from '../exit-codes';

export async function trimCommand(ctx: CommandContext): Promise<void> {
  if (ctx.args.positionals.length > 0) throw new UsageError('trim takes no arguments');
  if (!ctx.loaded.config.data.trim) throw new UsageError(`${ctx.loaded.config.name} has no trim section: nothing to trim`);
  ctx.io.progress(`trimming ${ctx.runtime().retention().length} stream(s)…`);
  const result = await runTrimJob(ctx.runtime());
  if (ctx.args.json) return ctx.io.out(runLogLine(result, { deployment: ctx.loaded.config.name }));
  for (const { name, retention } of result.streams) {
    ctx.io.out(
      `${name}: ${retention.stream.status}, removed ${retention.stream.removed} entries, ${retention.deadLetters.removed} dead letters, ` +
        `reaped ${retention.consumers.deleted.length} consumer(s), moved ${retention.schedule.moved} scheduled event(s)`,
    );
  }
}
