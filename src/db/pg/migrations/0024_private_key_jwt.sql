CREATE TABLE "client_assertions" (
	"client_id" text NOT NULL,
	"jti_hash" text NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "client_assertions_client_id_jti_hash_pk" PRIMARY KEY("client_id","jti_hash")
);
--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "jwks" text;--> statement-breakpoint
ALTER TABLE "client_assertions" ADD CONSTRAINT "client_assertions_client_id_oidc_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."oidc_clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "client_assertions_expires_idx" ON "client_assertions" USING btree ("expires_at");