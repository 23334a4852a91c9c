#!/usr/bin/env node
// The package's `saga-streams` command: runs the TypeScript CLI (and the user's TypeScript
// config, e.g. saga.config.ts) through tsx, without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
