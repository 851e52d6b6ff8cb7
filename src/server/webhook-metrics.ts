// The webhook gauges of /metrics, read at scrape time: deliveries by status (the queue depth
// is pending + sending), how long the oldest undelivered one has waited, and events not yet
// fanned out into deliveries.
import type { Deps } from '../core/deps'
import { Gauge, type Metrics } from './metrics'

export function addWebhookGauges(metrics: Metrics, deps: Pick<Deps, 'store' | 'clock'>) {
  let stats: ReturnType<Deps['store']['webhooks']['stats']> | undefined
  // One query per scrape for the three gauges.
  const read = () => (stats ??= deps.store.webhooks.stats().finally(() => setTimeout(() => (stats = undefined), 0)))
  metrics.addGauge(
    new Gauge('authd_webhook_deliveries', 'Webhook deliveries by status (pending and sending: the queue).', async () =>
      Object.entries((await read()).byStatus).map(([status, value]) => ({ labels: { status }, value })),
    ),
  )
  metrics.addGauge(
    new Gauge('authd_webhook_oldest_pending_age_seconds', 'Age of the oldest webhook delivery not yet delivered (0 when none).', async () => {
      const { oldestPendingAt } = await read()
      return [{ labels: {}, value: oldestPendingAt === null ? 0 : Math.max(0, (deps.clock.now() - oldestPendingAt) / 1000) }]
    }),
  )
  metrics.addGauge(
    new Gauge('authd_webhook_events_waiting', 'Webhook events written but not yet fanned out into deliveries.', async () => [{ labels: {}, value: (await read()).eventsWaiting }]),
  )
}
