CREATE TABLE `client_assertions` (
	`client_id` text NOT NULL,
	`jti_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `jti_hash`),
	FOREIGN KEY (`client_id`) REFERENCES `oidc_clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `client_assertions_expires_idx` ON `client_assertions` (`expires_at`);--> statement-breakpoint
ALTER TABLE `oidc_clients` ADD `jwks` text;