ALTER TABLE `audit_events` ADD `actor_user_id` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `console_enabled` integer DEFAULT true NOT NULL;