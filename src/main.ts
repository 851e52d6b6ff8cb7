// The entry point of the compiled `authd` binary: everything, serve included, is a command.
import { runCli } from './cli'

const code = await runCli(process.argv)
// A command may have set a failing exit code itself (doctor); keep the worse one.
process.exitCode = Math.max(code, Number(process.exitCode ?? 0))
