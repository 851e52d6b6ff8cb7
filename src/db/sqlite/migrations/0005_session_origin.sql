ALTER TABLE `refresh_tokens` ADD `ip` text;--> statement-breakpoint
ALTER TABLE `refresh_tokens` ADD `user_agent` text;