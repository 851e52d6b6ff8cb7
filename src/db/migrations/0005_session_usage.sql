ALTER TABLE `refresh_families` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `ip` text;--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `user_agent` text;