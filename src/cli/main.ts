#!/usr/bin/env node
// Entry of the `dida-todo` executable.
import { main } from './cli';

process.exitCode = await main(process.argv.slice(2));
