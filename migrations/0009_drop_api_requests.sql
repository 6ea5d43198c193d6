-- The request log moved to one Durable Object per account (src/requests/request-log.ts); its rows are not carried over.
DROP TABLE `api_requests`;