/** The package version, read from package.json (one level above both cli/ and dist/). */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  const url = new URL('../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}
