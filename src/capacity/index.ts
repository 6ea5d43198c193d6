export { AccountSlots, SLOT_RETRY_AFTER_SECONDS, type SlotGrant } from "./account-slots";
export { acquireSlot, releaseSlot, slotsFor, withAccountSlot } from "./slots";
export { ENGINE_RETRY_AFTER_SECONDS, engineUnavailable } from "./unavailable";
