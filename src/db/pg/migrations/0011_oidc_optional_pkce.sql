ALTER TABLE "oidc_codes" ALTER COLUMN "code_challenge" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_codes" ADD COLUMN "issuer" text;