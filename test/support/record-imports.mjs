// `node --import ./record-imports.mjs …`: appends the URL of every module the process resolves to the file named by
// RECORD_IMPORTS_TO, so a test can say what a command loaded (e.g. that `rollout-fleet worker` never loads express).
import { register } from 'node:module';

register(new URL('./record-imports-hooks.mjs', import.meta.url), { data: { file: process.env.RECORD_IMPORTS_TO } });
