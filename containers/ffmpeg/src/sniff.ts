/** Shared with the Worker: one definition in @p6/contract/sniff (packages/contract); this path stays for the pipeline's imports. */
export * from "@p6/contract/sniff";
