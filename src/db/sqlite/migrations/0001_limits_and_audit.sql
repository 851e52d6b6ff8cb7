CREATE TABLE `audit_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`type` text NOT NULL,
	`tenant_id` text,
	`user_id` text,
	`ip` text,
	`user_agent` text,
	`detail` text
);
--> statement-breakpoint
CREATE INDEX `audit_events_at_idx` ON `audit_events` (`at`);--> statement-breakpoint
CREATE INDEX `audit_events_tenant_idx` ON `audit_events` (`tenant_id`,`at`);--> statement-breakpoint
CREATE INDEX `audit_events_user_idx` ON `audit_events` (`user_id`,`at`);--> statement-breakpoint
CREATE TABLE `limit_counters` (
	`key` text PRIMARY KEY NOT NULL,
	`count` integer NOT NULL,
	`window_start` integer NOT NULL,
	`blocked_until` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `limit_counters_updated_idx` ON `limit_counters` (`updated_at`);--> statement-breakpoint
ALTER TABLE `password_reset_requests` ADD `issued` integer DEFAULT false NOT NULL;