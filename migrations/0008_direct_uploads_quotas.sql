PRAGMA defer_foreign_keys = on;--> statement-breakpoint
CREATE TABLE `__new_webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text,
	`upload_id` text,
	`account_id` text NOT NULL,
	`event` text NOT NULL,
	`url` text NOT NULL,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`created_at` integer NOT NULL,
	`completed_at` integer,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`upload_id`) REFERENCES `uploads`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "webhook_deliveries_subject" CHECK(("task_id" IS NULL) <> ("upload_id" IS NULL))
);
--> statement-breakpoint
INSERT INTO `__new_webhook_deliveries`("id", "task_id", "upload_id", "account_id", "event", "url", "body", "status", "attempt_count", "next_attempt_at", "created_at", "completed_at") SELECT "id", "task_id", NULL, "account_id", "event", "url", "body", "status", "attempt_count", "next_attempt_at", "created_at", "completed_at" FROM `webhook_deliveries`;--> statement-breakpoint
DROP TABLE `webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `__new_webhook_deliveries` RENAME TO `webhook_deliveries`;--> statement-breakpoint
PRAGMA defer_foreign_keys = off;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_task_idx` ON `webhook_deliveries` (`task_id`,`event`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_upload_idx` ON `webhook_deliveries` (`upload_id`,`event`);--> statement-breakpoint
CREATE INDEX `uploads_account_state_idx` ON `uploads` (`account_id`,`state`,`expires_at`);