export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const ULID_PREFIX_PATTERN = /^[0-9A-HJKMNP-TV-Z]{1,26}$/;

export function isUlid(value: string) {
  return ULID_PATTERN.test(value);
}
