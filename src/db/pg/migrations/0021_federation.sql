CREATE TABLE "federation_flows" (
	"id" text PRIMARY KEY NOT NULL,
	"state_hash" text NOT NULL,
	"tenant_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"intent" text NOT NULL,
	"user_id" text,
	"code_verifier_sealed" text NOT NULL,
	"nonce" text NOT NULL,
	"return_to" text,
	"stage" text NOT NULL,
	"pending_sealed" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identities" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"subject" text NOT NULL,
	"user_id" text NOT NULL,
	"email" text,
	"email_verified" boolean NOT NULL,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint
);
--> statement-breakpoint
CREATE TABLE "identity_providers" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"type" text NOT NULL,
	"name" text NOT NULL,
	"issuer" text,
	"client_id" text NOT NULL,
	"client_secret_sealed" text NOT NULL,
	"scopes" text NOT NULL,
	"link_by_email" text NOT NULL,
	"create_users" text,
	"trust_upstream_mfa" boolean NOT NULL,
	"groups_claim" text,
	"group_map" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "mfa_challenges" ADD COLUMN "provider_id" text;--> statement-breakpoint
ALTER TABLE "refresh_families" ADD COLUMN "provider_id" text;--> statement-breakpoint
ALTER TABLE "federation_flows" ADD CONSTRAINT "federation_flows_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federation_flows" ADD CONSTRAINT "federation_flows_provider_id_identity_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."identity_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federation_flows" ADD CONSTRAINT "federation_flows_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identities" ADD CONSTRAINT "identities_provider_id_identity_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."identity_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identities" ADD CONSTRAINT "identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_providers" ADD CONSTRAINT "identity_providers_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "federation_flows_state_idx" ON "federation_flows" USING btree ("state_hash");--> statement-breakpoint
CREATE INDEX "federation_flows_expires_idx" ON "federation_flows" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "identities_provider_subject_idx" ON "identities" USING btree ("provider_id","subject");--> statement-breakpoint
CREATE INDEX "identities_user_idx" ON "identities" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "identity_providers_tenant_name_idx" ON "identity_providers" USING btree ("tenant_id","name");--> statement-breakpoint
ALTER TABLE "mfa_challenges" ADD CONSTRAINT "mfa_challenges_provider_id_identity_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."identity_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Webhook events of identities (product spec §25), as the other triggers (scripts/webhook-triggers.ts).
-- An identity removed with its user (erasure) or its provider (deletion) is no event of its own.
CREATE FUNCTION webhook_identities_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'identity.linked', jsonb_build_object('identity', jsonb_build_object('id', NEW.id, 'providerId', NEW.provider_id, 'subject', NEW.subject, 'email', NEW.email), 'user', jsonb_build_object('id', NEW.user_id)));
  ELSIF EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) AND EXISTS (SELECT 1 FROM identity_providers WHERE id = OLD.provider_id) THEN
    PERFORM webhook_emit(OLD.tenant_id, OLD.user_id, 'identity.unlinked', jsonb_build_object('identity', jsonb_build_object('id', OLD.id, 'providerId', OLD.provider_id, 'subject', OLD.subject, 'email', OLD.email), 'user', jsonb_build_object('id', OLD.user_id)));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_identities AFTER INSERT OR DELETE ON identities FOR EACH ROW EXECUTE FUNCTION webhook_identities_changed();
--> statement-breakpoint
-- session.created names the provider a session was signed in through (providerId), null for
-- the other ways in; otherwise as 0010_webhook_session_client wrote it.
CREATE OR REPLACE FUNCTION webhook_sessions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'session.created', jsonb_build_object('session', jsonb_build_object('id', NEW.id, 'clientId', NEW.client_id, 'providerId', NEW.provider_id), 'user', jsonb_build_object('id', NEW.user_id)));
  ELSIF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'session.ended', jsonb_build_object('session', jsonb_build_object('id', NEW.id, 'clientId', NEW.client_id, 'reason', NEW.revoked_reason), 'user', jsonb_build_object('id', NEW.user_id)));
  END IF;
  RETURN NULL;
END $$;
