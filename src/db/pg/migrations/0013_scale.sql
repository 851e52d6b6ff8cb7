CREATE INDEX "mail_outbox_ended_idx" ON "mail_outbox" USING btree ("status","sent_at","created_at");--> statement-breakpoint
CREATE INDEX "mfa_challenges_user_idx" ON "mfa_challenges" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "mfa_challenges_ended_idx" ON "mfa_challenges" USING btree ("spent_at","expires_at");--> statement-breakpoint
CREATE INDEX "password_reset_otps_ended_idx" ON "password_reset_otps" USING btree ("spent_at","expires_at");--> statement-breakpoint
CREATE INDEX "password_reset_requests_created_idx" ON "password_reset_requests" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "pending_signups_ended_idx" ON "pending_signups" USING btree ("spent_at","expires_at");--> statement-breakpoint
CREATE INDEX "refresh_families_ended_idx" ON "refresh_families" USING btree ("revoked_at","expires_at");--> statement-breakpoint
CREATE INDEX "setup_tokens_ended_idx" ON "setup_tokens" USING btree ("used_at","expires_at");--> statement-breakpoint
CREATE INDEX "signup_requests_created_idx" ON "signup_requests" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "webauthn_challenges_ended_idx" ON "webauthn_challenges" USING btree ("spent_at","expires_at");