// The entry point of the compiled `authd` binary: everything, serve included, is a command.
import { runCli } from './cli'

// Everything authd writes holds or may hold secrets (the database with its signing keys,
// backups, mail files with OTPs): created owner-only from the first byte, with no window in
// which a chmod has not happened yet.
process.umask(0o077)

const code = await runCli(process.argv)
// A command may have set a failing exit code itself (doctor); keep the worse one.
process.exitCode = Math.max(code, Number(process.exitCode ?? 0))
