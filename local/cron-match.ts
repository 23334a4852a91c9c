/**
 * Emulated schedules for the local stack: whether a 5-field cron expression (the form
 * `defineConfig` accepts) fires in a given minute, in UTC — as EventBridge and Cloudflare
 * cron triggers do. Fields accept `*`, `n`,
 * `a-b`, `/step` and comma lists; when both day fields are restricted either may match
 * (classic cron).
 */

const RANGES: ReadonlyArray<readonly [number, number]> = [
  [0, 59], // minute
  [0, 23], // hour
  [1, 31], // day of month
  [1, 12], // month
  [0, 7], // day of week (0 and 7 are Sunday)
];

function fieldMatches(field: string, value: number, [min, max]: readonly [number, number]): boolean {
  return field.split(',').some((part) => {
    const [range = '*', stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    let [from, to] = [min, max];
    if (range !== '*') {
      const [a, b] = range.split('-').map(Number);
      from = a!;
      to = b ?? (stepText === undefined ? a! : max);
    }
    return value >= from && value <= to && (value - from) % step === 0;
  });
}

export function cronMatches(expression: string, at: Date): boolean {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return false;
  const [minute, hour, dom, month, dow] = fields as [string, string, string, string, string];
  const day = at.getUTCDay();
  const domOk = fieldMatches(dom, at.getUTCDate(), RANGES[2]!);
  const dowOk = fieldMatches(dow, day, RANGES[4]!) || (day === 0 && fieldMatches(dow, 7, RANGES[4]!));
  const dayOk = dom !== '*' && dow !== '*' ? domOk || dowOk : domOk && dowOk;
  return (
    fieldMatches(minute, at.getUTCMinutes(), RANGES[0]!) &&
    fieldMatches(hour, at.getUTCHours(), RANGES[1]!) &&
    fieldMatches(month, at.getUTCMonth() + 1, RANGES[3]!) &&
    dayOk
  );
}

/** Ms from `now` to the start of the next minute. */
export function msToNextMinute(now: number): number {
  return 60_000 - (now % 60_000);
}
