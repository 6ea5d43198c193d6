CREATE TABLE `uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`filename` text,
	`state` text NOT NULL,
	`media_type` text,
	`r2_key` text NOT NULL,
	`created_at` integer NOT NULL,
	`completed_at` integer,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `uploads_account_created_idx` ON `uploads` (`account_id`,`created_at`);