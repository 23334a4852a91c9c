/**
 * Schedules are standard 5-field cron expressions (minute hour day-of-month month
 * day-of-week), the form Cloudflare cron triggers take. Other platforms translate from it.
 */

const FIELD = /^(\*|\d{1,2}(-\d{1,2})?)(\/\d{1,2})?(,(\*|\d{1,2}(-\d{1,2})?)(\/\d{1,2})?)*$/;

export function isCronExpression(text: string): boolean {
  const fields = text.trim().split(/\s+/);
  return fields.length === 5 && fields.every((f) => FIELD.test(f));
}

/**
 * EventBridge's 6-field form: `cron(min hour dom month dow year)` where one of
 * day-of-month / day-of-week must be `?`. Only expressions with day-of-week `*` (or
 * day-of-month `*`) translate without changing meaning; others are refused.
 */
export function toEventBridgeCron(text: string): string {
  if (!isCronExpression(text)) throw new TypeError(`not a 5-field cron expression: ${JSON.stringify(text)}`);
  const [minute, hour, dom, month, dow] = text.trim().split(/\s+/) as [string, string, string, string, string];
  if (dow === '*') return `cron(${minute} ${hour} ${dom} ${month} ? *)`;
  if (dom === '*') return `cron(${minute} ${hour} ? ${month} ${dow} *)`;
  throw new TypeError(`cron ${JSON.stringify(text)} restricts both day-of-month and day-of-week; EventBridge cannot express it`);
}
