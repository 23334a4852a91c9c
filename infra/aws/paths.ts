/** Where the function entry files and the lock file are, whatever directory `cdk` runs from. */
import { fileURLToPath } from 'node:url';
import type { FunctionRole } from '../../functions/aws/lib/roles';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const LOCK_FILE = fileURLToPath(new URL('../../package-lock.json', import.meta.url));

/** The Lambda entry file of each function (each binds saga.config.ts). */
export const ENTRY_FILES: Readonly<Record<FunctionRole, string>> = {
  poll: fileURLToPath(new URL('../../functions/aws/poll.ts', import.meta.url)),
  'wake-up': fileURLToPath(new URL('../../functions/aws/wake-up.ts', import.meta.url)),
  trim: fileURLToPath(new URL('../../functions/aws/trim.ts', import.meta.url)),
  publish: fileURLToPath(new URL('../../functions/aws/publish.ts', import.meta.url)),
};
