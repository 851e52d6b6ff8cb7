// The entry point of the compiled `authd` binary: everything, serve included, is a command.
import { runCli } from './cli'

process.exitCode = await runCli(process.argv)
