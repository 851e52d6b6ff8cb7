CREATE TABLE "pending_signups" (
	"tenant_id" text NOT NULL,
	"email_key" text NOT NULL,
	"first_name" text NOT NULL,
	"last_name" text NOT NULL,
	"password_hash" text NOT NULL,
	"code_hash" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"attempts" integer NOT NULL,
	"spent_at" bigint,
	CONSTRAINT "pending_signups_tenant_id_email_key_pk" PRIMARY KEY("tenant_id","email_key")
);
--> statement-breakpoint
CREATE TABLE "signup_requests" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"email_key" text NOT NULL,
	"created_at" bigint NOT NULL,
	"issued" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "signup" text DEFAULT 'closed' NOT NULL;--> statement-breakpoint
CREATE INDEX "pending_signups_expires_idx" ON "pending_signups" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "signup_requests_email_idx" ON "signup_requests" USING btree ("tenant_id","email_key","created_at");