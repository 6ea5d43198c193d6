ALTER TABLE `tasks` ADD `charged` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `steps` text;