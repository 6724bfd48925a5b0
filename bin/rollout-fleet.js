#!/usr/bin/env node
// `rollout-fleet <subcommand>`: the CLI (bin/run-cli.js: the built bundle when current, else the sources via tsx).
import { runCli } from './run-cli.js';

await runCli();
