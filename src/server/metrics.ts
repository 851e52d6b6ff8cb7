// Prometheus metrics, in the text exposition format (version 0.0.4). Counters, gauges read
// at scrape time, and one histogram family are all authd needs; a few dozen lines serve
// them without prom-client, which is built around Node's process model and default
// collectors we do not want inside the compiled binary.

type Labels = Record<string, string>

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
const labelText = (labels: Labels) => {
  const entries = Object.entries(labels)
  return entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`
}

export class Counter {
  private readonly values = new Map<string, { labels: Labels; value: number }>()
  constructor(readonly name: string, readonly help: string) {}
  inc(labels: Labels = {}, by = 1) {
    this.series(labels).value += by
  }
  /** The series for these labels, to count on without building its key again (hot paths). */
  series(labels: Labels): { value: number } {
    const key = labelText(labels)
    let entry = this.values.get(key)
    if (!entry) this.values.set(key, (entry = { labels, value: 0 }))
    return entry
  }
  render(): string[] {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`, ...[...this.values.values()].map((e) => `${this.name}${labelText(e.labels)} ${e.value}`)]
  }
}

interface HistogramSeries {
  labels: Labels
  /** Observations per bucket (the first bound they fit under; the last slot is +Inf only): made cumulative when rendered. */
  counts: number[]
  sum: number
  count: number
}

export class Histogram {
  private readonly series = new Map<string, HistogramSeries>()
  constructor(readonly name: string, readonly help: string, readonly buckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]) {}
  observe(labels: Labels, seconds: number) {
    this.recorder(labels)(seconds)
  }
  /** A function that records into the series for these labels (hot paths keep it). */
  recorder(labels: Labels): (seconds: number) => void {
    const key = labelText(labels)
    let entry = this.series.get(key)
    if (!entry) this.series.set(key, (entry = { labels, counts: this.buckets.map(() => 0).concat(0), sum: 0, count: 0 }))
    const series = entry
    return (seconds) => {
      let i = 0
      while (i < this.buckets.length && seconds > this.buckets[i]!) i++
      series.counts[i]!++
      series.sum += seconds
      series.count++
    }
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`]
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i]!
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: String(bound) })} ${cumulative}`)
      })
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${count}`, `${this.name}_sum${labelText(labels)} ${sum}`, `${this.name}_count${labelText(labels)} ${count}`)
    }
    return lines
  }
}

/** A gauge whose value is read when Prometheus scrapes. */
export class Gauge {
  constructor(readonly name: string, readonly help: string, private readonly read: () => Promise<Array<{ labels: Labels; value: number }>>) {}
  async render(): Promise<string[]> {
    const values = await this.read()
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`, ...values.map((v) => `${this.name}${labelText(v.labels)} ${v.value}`)]
  }
}

export class Metrics {
  readonly requests = new Counter('authd_http_requests_total', 'HTTP requests by route, method and status.')
  readonly requestDuration = new Histogram('authd_http_request_duration_seconds', 'HTTP request latency by route and method.')
  readonly logins = new Counter('authd_logins_total', 'Login attempts by outcome (succeeded, challenged for a second factor, failed, limited, overloaded).')
  readonly otpsRequested = new Counter('authd_password_reset_requests_total', 'Forgot-password requests answered.')
  readonly signups = new Counter('authd_signups_total', 'Sign-ups answered (requested; whatever became of them) and verified (completed).')
  readonly mailDeliveries = new Counter('authd_mail_deliveries_total', 'Outbox delivery attempts by outcome (sent, retry, failed, expired).')
  readonly webhookDeliveries = new Counter('authd_webhook_deliveries_total', 'Webhook delivery attempts by outcome (succeeded; failed, to be retried; dead, retried for 3 days; lost, outlasted its claim: outcome dropped).')
  readonly forwardAuthChecks = new Counter('authd_forward_auth_checks_total', 'Forward-auth checks by outcome (allowed, denied, sign_in: no session, second_factor: a session without one on a two_factor rule).')
  readonly errors = new Counter('authd_errors_total', 'Error responses by their stable code (src/core/errors.ts).')
  private readonly gauges: Gauge[] = []

  addGauge(gauge: Gauge) {
    this.gauges.push(gauge)
  }

  async render(): Promise<string> {
    const parts = [this.requests, this.requestDuration, this.logins, this.otpsRequested, this.signups, this.mailDeliveries, this.webhookDeliveries, this.forwardAuthChecks, this.errors].flatMap((m) => m.render())
    for (const gauge of this.gauges) parts.push(...(await gauge.render()))
    return parts.join('\n') + '\n'
  }
}
