/** Shared with the Worker: one definition in @p6/contract/address-policy (packages/contract); this path stays for the pipeline's imports. */
export * from "@p6/contract/address-policy";
