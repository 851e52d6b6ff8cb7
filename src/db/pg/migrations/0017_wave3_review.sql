CREATE TABLE "server_settings" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "id_token_alg" text DEFAULT 'RS256' NOT NULL;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "return_to_origins" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_at" bigint;--> statement-breakpoint
-- Clients registered before RS256 existed keep the ES256 their relying parties already accept.
UPDATE "oidc_clients" SET "id_token_alg" = 'ES256';--> statement-breakpoint
-- Passkey origins doubled as return_to targets until now: they stay return_to targets (the
-- operator's to review with `authd tenants show`), and from now on only the CLI sets them.
UPDATE "tenants" SET "return_to_origins" = "passkey_origins" WHERE "passkey_origins" IS NOT NULL;
