import type { Command } from 'commander'
import { runDoctor } from '../doctor/checks'
import { contextFrom } from '../context'
import { withRecordedPublicUrlIfReadable } from '../public-url'
import type { Env } from '../env'

const MARK = { ok: '✓', warn: '!', fail: '✗' } as const

export function registerDoctor(program: Command, env: Env) {
  program
    .command('doctor')
    .description('check the configuration, database, migrations, SMTP, permissions and signing-key age, and say what to fix (exit 1 on a failure)')
    .action(async (_: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env, { warnings: false })
      // Its transport check names the public URL: the one the CLI's links would use.
      const { config, assumed } = await withRecordedPublicUrlIfReadable(ctx.config(), ctx.env)
      const findings = await runDoctor(config, ctx.env)
      ctx.linkWritten(assumed)
      ctx.out.result(findings, () =>
        findings.flatMap((f) => [`${MARK[f.status]} ${f.check}: ${f.detail}`, ...(f.fix ? [`    fix: ${f.fix}`] : [])]),
      )
      if (findings.some((f) => f.status === 'fail')) process.exitCode = 1
    })
}
