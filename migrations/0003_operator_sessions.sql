PRAGMA defer_foreign_keys = on;--> statement-breakpoint
CREATE TABLE `__new_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text DEFAULT 'user' NOT NULL,
	`user_id` text,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "sessions_owner" CHECK(("kind" = 'user') = ("user_id" IS NOT NULL))
);
--> statement-breakpoint
INSERT INTO `__new_sessions`("id", "kind", "user_id", "created_at", "last_seen_at", "expires_at") SELECT "id", 'user', "user_id", "created_at", "last_seen_at", "expires_at" FROM `sessions`;--> statement-breakpoint
DROP TABLE `sessions`;--> statement-breakpoint
ALTER TABLE `__new_sessions` RENAME TO `sessions`;--> statement-breakpoint
PRAGMA defer_foreign_keys = off;--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);