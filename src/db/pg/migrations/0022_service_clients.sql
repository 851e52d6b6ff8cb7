ALTER TABLE "oidc_clients" ADD COLUMN "service" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "scopes" text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "audiences" text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "token_lifetime_sec" integer DEFAULT 900 NOT NULL;