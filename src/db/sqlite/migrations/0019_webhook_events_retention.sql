ALTER TABLE `webhook_events` ADD `deliveries` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The events fanned out before this migration: how many of their deliveries are left (none:
-- retention's pick of the events of no delivery takes them).
UPDATE webhook_events SET deliveries = (SELECT count(*) FROM webhook_deliveries d WHERE d.event_id = webhook_events.id) WHERE fanned_out_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_events_undelivered_idx` ON `webhook_events` (`fanned_out_at`) WHERE deliveries = 0;--> statement-breakpoint
CREATE INDEX `webhook_events_delivered_idx` ON `webhook_events` (`fanned_out_at`) WHERE deliveries > 0;