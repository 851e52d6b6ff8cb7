CREATE TABLE `pending_signups` (
	`tenant_id` text NOT NULL,
	`email_key` text NOT NULL,
	`first_name` text NOT NULL,
	`last_name` text NOT NULL,
	`password_hash` text NOT NULL,
	`code_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`attempts` integer NOT NULL,
	`spent_at` integer,
	PRIMARY KEY(`tenant_id`, `email_key`)
);
--> statement-breakpoint
CREATE INDEX `pending_signups_expires_idx` ON `pending_signups` (`expires_at`);--> statement-breakpoint
CREATE TABLE `signup_requests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`email_key` text NOT NULL,
	`created_at` integer NOT NULL,
	`issued` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX `signup_requests_email_idx` ON `signup_requests` (`tenant_id`,`email_key`,`created_at`);--> statement-breakpoint
ALTER TABLE `tenants` ADD `signup` text DEFAULT 'closed' NOT NULL;