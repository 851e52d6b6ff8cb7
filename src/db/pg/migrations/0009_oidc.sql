CREATE TABLE "oidc_clients" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"secret_hash" text,
	"secret_prefix" text,
	"redirect_uris" text NOT NULL,
	"post_logout_redirect_uris" text NOT NULL,
	"first_party" boolean NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oidc_codes" (
	"id" text PRIMARY KEY NOT NULL,
	"code_hash" text NOT NULL,
	"tenant_id" text NOT NULL,
	"client_id" text NOT NULL,
	"user_id" text NOT NULL,
	"session_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"nonce" text,
	"scope" text NOT NULL,
	"auth_at" bigint NOT NULL,
	"amr" text NOT NULL,
	"user_epoch" integer NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"spent_at" bigint,
	"family_id" text
);
--> statement-breakpoint
CREATE TABLE "oidc_consents" (
	"user_id" text NOT NULL,
	"client_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"scope" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "oidc_consents_user_id_client_id_pk" PRIMARY KEY("user_id","client_id")
);
--> statement-breakpoint
ALTER TABLE "refresh_families" ADD COLUMN "client_id" text;--> statement-breakpoint
ALTER TABLE "refresh_families" ADD COLUMN "scope" text;--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD CONSTRAINT "oidc_clients_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_codes" ADD CONSTRAINT "oidc_codes_client_id_oidc_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."oidc_clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_codes" ADD CONSTRAINT "oidc_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_consents" ADD CONSTRAINT "oidc_consents_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_consents" ADD CONSTRAINT "oidc_consents_client_id_oidc_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."oidc_clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oidc_clients_tenant_idx" ON "oidc_clients" USING btree ("tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "oidc_codes_hash_idx" ON "oidc_codes" USING btree ("code_hash");--> statement-breakpoint
CREATE INDEX "oidc_codes_expires_idx" ON "oidc_codes" USING btree ("expires_at");