// A progress bar on stderr for long commands (`authd db copy`), drawn only on a terminal: a
// script or a test reading stderr sees nothing of it.
export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr) {
  const started = performance.now()
  let drawnAt = 0
  const draw = (done: number, total: number) => {
    const now = performance.now()
    if (!stream.isTTY || (now - drawnAt < 100 && done < total)) return
    drawnAt = now
    const share = total === 0 ? 1 : done / total
    const seconds = (now - started) / 1000
    const bar = '#'.repeat(Math.round(share * 30)).padEnd(30, '.')
    const eta = share > 0 ? Math.round((seconds / share) * (1 - share)) : 0
    stream.write(`\r${label} [${bar}] ${Math.floor(share * 100)}%  ${done.toLocaleString('en')}/${total.toLocaleString('en')} rows  ${Math.round(done / Math.max(seconds, 0.001)).toLocaleString('en')}/s  eta ${eta}s\x1b[K`)
  }
  return { draw, finish: () => stream.isTTY && stream.write('\n') }
}
