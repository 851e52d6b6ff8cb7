CREATE TABLE `access_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`position` integer NOT NULL,
	`domain` text NOT NULL,
	`paths` text NOT NULL,
	`methods` text NOT NULL,
	`policy` text NOT NULL,
	`groups` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `access_rules_tenant_position_idx` ON `access_rules` (`tenant_id`,`position`);--> statement-breakpoint
ALTER TABLE `tenants` ADD `forward_auth_domains` text;