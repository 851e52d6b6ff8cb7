export {}
// Every benchmark, in turn (npm run bench): throughput against the yardsticks, enumeration
// timing, the login flood, the engines, the signed-in user's and admin API's reads, the OpenID Provider, groups and forward authentication. Each can also be run alone (bun bench/<name>.ts).
// `npm run bench -- seed …` fills a database instead (bench/seed-command.ts), and
// `npm run bench -- scale` runs the scale bench (bench/scale.ts).
const [command, ...rest] = process.argv.slice(2)
if (command === 'seed') {
  await (await import('./seed-command')).seedCommand(rest)
} else if (command === 'scale') {
  await (await import('./scale')).scaleBench()
} else {
  await (await import('./throughput')).throughputBench()
  await (await import('./timing')).timingBench()
  await (await import('./flood')).floodBench()
  await (await import('./engines')).enginesBench()
  await (await import('./signed-in')).signedInBench()
  await (await import('./oidc')).oidcBench()
  await (await import('./groups')).groupsBench()
  await (await import('./forward-auth')).forwardAuthBench()
}
