#!/usr/bin/env node
// Runs the TypeScript CLI through tsx so a fresh clone works after `npm ci`, with no build step.
import { register } from 'tsx/esm/api';
register();
await import('../cli/main.ts');
