#!/usr/bin/env node
/** htmldrop: the command line's entry (dist/cli.js, which bin/htmldrop.js runs); the program is cli/main.ts. */
import { runCli } from './cli/main.js';

runCli();
